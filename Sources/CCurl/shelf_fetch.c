#include "shelf_fetch.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

// Private to this file, so <stdatomic.h> stays out of the header Swift reads.
struct shelf_fetch_cancel {
    atomic_int flag;
};

struct transfer {
    const struct shelf_fetch_options *options;
    struct shelf_fetch_result *result;
    size_t capacity;
    int refused;
    int too_large;
    int write_failed;
    char refused_address[64];
};

static int private_v4(uint32_t host) {
    uint8_t a = host >> 24, b = (host >> 16) & 0xff;
    if (a == 0 || a == 10 || a == 127) return 1;
    if (a == 169 && b == 254) return 1;
    if (a == 172 && (b & 0xf0) == 16) return 1;
    if (a == 192 && b == 168) return 1;
    if (a == 100 && (b & 0xc0) == 64) return 1;  // carrier-grade NAT
    if (a == 192 && b == 0 && ((host >> 8) & 0xff) == 0) return 1;
    if (a == 198 && (b & 0xfe) == 18) return 1;  // benchmarking
    if (a >= 224) return 1;                      // multicast, reserved, broadcast
    return 0;
}

static int private_v6(const struct in6_addr *address) {
    const uint8_t *b = address->s6_addr;
    static const uint8_t zero[16] = {0};
    if (memcmp(b, zero, 15) == 0 && (b[15] == 0 || b[15] == 1)) return 1;  // :: and ::1
    if ((b[0] & 0xfe) == 0xfc) return 1;                                    // unique local
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return 1;                    // link-local
    if (b[0] == 0xff) return 1;                                             // multicast
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(b, mapped, 12) == 0 || memcmp(b, zero, 12) == 0) {
        uint32_t v4 = ((uint32_t)b[12] << 24) | ((uint32_t)b[13] << 16) | ((uint32_t)b[14] << 8) | b[15];
        return private_v4(v4);
    }
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return 1;                    // site-local (deprecated)
    // NAT64 (64:ff9b::/96 and the local-use 64:ff9b:1::/48) reaches the IPv4 address in the last 32 bits.
    static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t nat64_local[6] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};
    if (memcmp(b, nat64, 12) == 0 || memcmp(b, nat64_local, 6) == 0) {
        uint32_t v4 = ((uint32_t)b[12] << 24) | ((uint32_t)b[13] << 16) | ((uint32_t)b[14] << 8) | b[15];
        return private_v4(v4);
    }
    if (b[0] == 0x20 && b[1] == 0x02) {  // 6to4 carries an IPv4 address
        uint32_t v4 = ((uint32_t)b[2] << 24) | ((uint32_t)b[3] << 16) | ((uint32_t)b[4] << 8) | b[5];
        return private_v4(v4);
    }
    return 0;
}

int shelf_fetch_is_private_literal(const char *address) {
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, address, &v4) == 1) return private_v4(ntohl(v4.s_addr));
    if (inet_pton(AF_INET6, address, &v6) == 1) return private_v6(&v6);
    return -1;
}

// Every connection, the first and each redirect's, is checked here against the address actually
// dialled, so a name that resolves to a private address (or changes between lookups) is caught.
static curl_socket_t open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *address) {
    struct transfer *t = clientp;
    (void)purpose;
    if (!t->options->allow_private) {
        int blocked = 0;
        if (address->family == AF_INET) {
            const struct sockaddr_in *in = (const struct sockaddr_in *)&address->addr;
            blocked = private_v4(ntohl(in->sin_addr.s_addr));
            if (blocked) inet_ntop(AF_INET, &in->sin_addr, t->refused_address, sizeof t->refused_address);
        } else if (address->family == AF_INET6) {
            const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&address->addr;
            blocked = private_v6(&in6->sin6_addr);
            if (blocked) inet_ntop(AF_INET6, &in6->sin6_addr, t->refused_address, sizeof t->refused_address);
        } else {
            blocked = 1;
            snprintf(t->refused_address, sizeof t->refused_address, "a non-IP address");
        }
        if (blocked) {
            t->refused = 1;
            return CURL_SOCKET_BAD;
        }
    }
    return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

static size_t write_body(char *data, size_t size, size_t count, void *clientp) {
    struct transfer *t = clientp;
    size_t length = size * count;
    struct shelf_fetch_result *r = t->result;
    if (r->bytes + (int64_t)length > t->options->max_bytes) {
        t->too_large = 1;
        return 0;
    }
    if (t->options->fd >= 0) {
        size_t written = 0;
        while (written < length) {
            ssize_t n = write(t->options->fd, data + written, length - written);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                t->write_failed = errno ? errno : EIO;
                return 0;
            }
            written += (size_t)n;
        }
    } else {
        if ((size_t)r->bytes + length > t->capacity) {
            size_t capacity = t->capacity ? t->capacity * 2 : 64 * 1024;
            while (capacity < (size_t)r->bytes + length) capacity *= 2;
            unsigned char *grown = realloc(r->body, capacity);
            if (!grown) return 0;
            r->body = grown;
            t->capacity = capacity;
        }
        memcpy(r->body + r->bytes, data, length);
    }
    r->bytes += (int64_t)length;
    return length;
}

static int progress(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    struct transfer *t = clientp;
    (void)dltotal; (void)dlnow; (void)ultotal; (void)ulnow;
    return (t->options->cancel && atomic_load(&t->options->cancel->flag)) ? 1 : 0;
}

struct shelf_fetch_cancel *shelf_fetch_cancel_new(void) {
    struct shelf_fetch_cancel *cancel = malloc(sizeof *cancel);
    if (cancel) atomic_init(&cancel->flag, 0);
    return cancel;
}

void shelf_fetch_cancel_set(struct shelf_fetch_cancel *cancel) {
    if (cancel) atomic_store(&cancel->flag, 1);
}

void shelf_fetch_cancel_free(struct shelf_fetch_cancel *cancel) { free(cancel); }

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static void global_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

int shelf_fetch(const struct shelf_fetch_options *options, struct shelf_fetch_result *result) {
    pthread_once(&global_once, global_init);
    memset(result, 0, sizeof *result);
    struct transfer t = {.options = options, .result = result};
    CURL *curl = curl_easy_init();
    if (!curl) {
        result->status = SHELF_FETCH_FAILED;
        snprintf(result->message, sizeof result->message, "libcurl could not start a transfer");
        return result->status;
    }
    char error[CURL_ERROR_SIZE] = {0};
    // The settings the limits rest on must take, or nothing is fetched (an older libcurl without
    // the _STR protocol options would otherwise fetch any scheme).
    CURLcode setup = CURLE_OK;
    if (setup == CURLE_OK) setup = curl_easy_setopt(curl, CURLOPT_URL, options->url);
    if (setup == CURLE_OK) setup = curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    if (setup == CURLE_OK) setup = curl_easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    if (setup == CURLE_OK) setup = curl_easy_setopt(curl, CURLOPT_PROXY, "");
    if (setup == CURLE_OK) setup = curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    if (setup == CURLE_OK) setup = curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, &t);
    if (setup == CURLE_OK) setup = curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)options->max_bytes);
    if (setup != CURLE_OK) {
        result->status = SHELF_FETCH_FAILED;
        snprintf(result->message, sizeof result->message, "libcurl refused a setting the fetch limits need: %s", curl_easy_strerror(setup));
        curl_easy_cleanup(curl);
        return result->status;
    }
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, options->body ? 0L : 1L);
    struct curl_slist *headers = NULL;
    if (options->body) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)options->body_length);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, (const char *)options->body);
    }
    if (options->headers) {
        // One slist entry a line; libcurl copies each string.
        const char *line = options->headers;
        while (*line) {
            const char *end = strchr(line, '\n');
            size_t length = end ? (size_t)(end - line) : strlen(line);
            if (length > 0 && length < 1024) {
                char buffer[1024];
                memcpy(buffer, line, length);
                buffer[length] = 0;
                struct curl_slist *next = curl_slist_append(headers, buffer);
                if (next) headers = next;
            }
            if (!end) break;
            line = end + 1;
        }
        if (headers) curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    }
    curl_easy_setopt(curl, CURLOPT_MAXREDIRS, options->max_redirects);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, options->timeout_seconds);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, options->connect_timeout_seconds);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, options->stall_seconds);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(curl, CURLOPT_USERAGENT, options->user_agent ? options->user_agent : "Shelf");
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, write_body);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, progress);
    curl_easy_setopt(curl, CURLOPT_XFERINFODATA, &t);
    CURLcode code = curl_easy_perform(curl);
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &result->http_status);
    char *type = NULL;
    if (curl_easy_getinfo(curl, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type) {
        snprintf(result->content_type, sizeof result->content_type, "%s", type);
    }
    char *effective = NULL;
    if (curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective) {
        snprintf(result->effective_url, sizeof result->effective_url, "%s", effective);
    }
    const char *reason = error[0] ? error : curl_easy_strerror(code);
    if (t.refused) {
        result->status = SHELF_FETCH_REFUSED;
        snprintf(result->message, sizeof result->message,
                 "refused to connect to %s: a private, loopback or link-local address (shelf serve --podcast-allow-private allows it)",
                 t.refused_address);
    } else if (t.too_large || code == CURLE_FILESIZE_EXCEEDED) {
        result->status = SHELF_FETCH_TOO_LARGE;
        snprintf(result->message, sizeof result->message, "larger than the limit of %lld bytes", (long long)options->max_bytes);
    } else if (t.write_failed) {
        result->status = SHELF_FETCH_WRITE;
        snprintf(result->message, sizeof result->message, "could not write the file: %s", strerror(t.write_failed));
    } else if (code == CURLE_ABORTED_BY_CALLBACK) {
        result->status = SHELF_FETCH_CANCELLED;
        snprintf(result->message, sizeof result->message, "cancelled");
    } else if (code == CURLE_TOO_MANY_REDIRECTS) {
        result->status = SHELF_FETCH_REDIRECTS;
        snprintf(result->message, sizeof result->message, "more than %ld redirects: %s", options->max_redirects, reason);
    } else if (code == CURLE_PARTIAL_FILE) {
        result->status = SHELF_FETCH_TRUNCATED;
        snprintf(result->message, sizeof result->message, "the connection closed after %lld bytes, before the length the server declared",
                 (long long)result->bytes);
    } else if (code != CURLE_OK) {
        result->status = SHELF_FETCH_FAILED;
        snprintf(result->message, sizeof result->message, "%s", reason);
    } else if (result->http_status >= 400) {
        result->status = SHELF_FETCH_HTTP_ERROR;
        snprintf(result->message, sizeof result->message, "the server answered HTTP %ld", result->http_status);
    } else {
        result->status = SHELF_FETCH_OK;
    }
    curl_easy_cleanup(curl);
    curl_slist_free_all(headers);
    return result->status;
}

void shelf_fetch_free(struct shelf_fetch_result *result) {
    free(result->body);
    result->body = NULL;
}

const char *shelf_fetch_curl_version(void) { return curl_version(); }
