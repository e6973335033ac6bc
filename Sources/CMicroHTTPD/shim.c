// Bridges libmicrohttpd to Swift: builds the variadic start call from plain fields, formats the
// va_list logger, and forwards the callbacks. The one policy here is the per-address connection
// limit (see `admit`), because it needs the sockets, which Swift never sees.
#include "shelf_http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// One open connection, for the per-address limit: its socket and address, whether a request is in
// flight (or parked: an event stream, a suspended handler), and when it last finished one.
struct tracked_connection {
    struct MHD_Connection *connection;
    MHD_socket fd;
    struct sockaddr_storage address;
    unsigned long long last_used;
    int busy;
    int closing;
};

struct shelf_http_daemon {
    struct MHD_Daemon *mhd;
    pthread_mutex_t lock; // guards the fields below: the listening thread and the pool's threads use them
    struct tracked_connection *open;
    size_t open_count, open_capacity;
    unsigned long long clock;
    unsigned int per_address;
    MHD_socket listen_fd; // kept from quiesce: closed only after MHD_stop_daemon, as the docs ask
    struct shelf_http_callbacks callbacks;
    void *context;
    char *cert;
    char *key;
};

// Start-up failures are reported by libmicrohttpd only through its logger, so while a start is
// under way on this thread the last message is kept as the reason.
static __thread char *start_error;
static __thread size_t start_error_size;

static void logger(void *cls, const char *format, va_list arguments) {
    struct shelf_http_daemon *d = cls;
    char message[1024];
    vsnprintf(message, sizeof message, format, arguments);
    size_t length = strlen(message);
    while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == '\r')) message[--length] = 0;
    if (start_error != NULL && start_error_size > 0) snprintf(start_error, start_error_size, "%s", message);
    if (d->callbacks.error_log != NULL) d->callbacks.error_log(d->context, message);
}

// Whether two addresses are the same host (the port is the connection's, not the client's).
static int same_host(const struct sockaddr_storage *a, const struct sockaddr *b) {
    if (a->ss_family != b->sa_family) return 0;
    if (b->sa_family == AF_INET)
        return memcmp(&((const struct sockaddr_in *)a)->sin_addr, &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr)) == 0;
    if (b->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr, sizeof(struct in6_addr)) == 0;
    return 0;
}

static struct tracked_connection *find_tracked(struct shelf_http_daemon *d, struct MHD_Connection *connection) {
    for (size_t i = 0; i < d->open_count; i++)
        if (d->open[i].connection == connection) return &d->open[i];
    return NULL;
}

// The per-address limit: at the limit, the address's connection idle the longest is shut down to
// make room (a client that leaks idle keep-alive connections would otherwise be refused for good
// while it reports nothing); only when every one of them is busy is the new one refused.
static enum MHD_Result admit(void *cls, const struct sockaddr *address, socklen_t length) {
    (void)length;
    struct shelf_http_daemon *d = cls;
    if (d->per_address == 0) return MHD_YES;
    if (d->callbacks.unlimited != NULL) {
        char text[64] = {0};
        if (address->sa_family == AF_INET)
            inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, text, sizeof text);
        else if (address->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, text, sizeof text);
        if (text[0] != 0 && d->callbacks.unlimited(d->context, text)) return MHD_YES;
    }
    pthread_mutex_lock(&d->lock);
    unsigned int count = 0;
    struct tracked_connection *oldest = NULL;
    for (size_t i = 0; i < d->open_count; i++) {
        struct tracked_connection *t = &d->open[i];
        if (t->closing || !same_host(&t->address, address)) continue;
        count++;
        if (!t->busy && (oldest == NULL || t->last_used < oldest->last_used)) oldest = t;
    }
    enum MHD_Result result = MHD_YES;
    if (count >= d->per_address) {
        if (oldest != NULL) {
            // shutdown, not close: the descriptor stays libmicrohttpd's, which sees the end and closes it.
            shutdown(oldest->fd, SHUT_RDWR);
            oldest->closing = 1;
        } else {
            result = MHD_NO;
        }
    }
    pthread_mutex_unlock(&d->lock);
    return result;
}

static void connection_notified(void *cls, struct MHD_Connection *connection, void **socket_context,
                                enum MHD_ConnectionNotificationCode code) {
    (void)socket_context;
    struct shelf_http_daemon *d = cls;
    pthread_mutex_lock(&d->lock);
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
        const union MHD_ConnectionInfo *address = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        if (d->open_count == d->open_capacity) {
            size_t capacity = d->open_capacity == 0 ? 64 : d->open_capacity * 2;
            struct tracked_connection *grown = realloc(d->open, capacity * sizeof *grown);
            if (grown != NULL) {
                d->open = grown;
                d->open_capacity = capacity;
            }
        }
        if (d->open_count < d->open_capacity && fd != NULL && address != NULL && address->client_addr != NULL) {
            struct tracked_connection *t = &d->open[d->open_count++];
            memset(t, 0, sizeof *t);
            t->connection = connection;
            t->fd = fd->connect_fd;
            size_t size = address->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
            memcpy(&t->address, address->client_addr, size);
            t->last_used = ++d->clock;
        }
    } else {
        for (size_t i = 0; i < d->open_count; i++) {
            if (d->open[i].connection == connection) {
                d->open[i] = d->open[--d->open_count];
                break;
            }
        }
    }
    pthread_mutex_unlock(&d->lock);
}

static void *uri_logged(void *cls, const char *uri, struct MHD_Connection *connection) {
    struct shelf_http_daemon *d = cls;
    pthread_mutex_lock(&d->lock);
    struct tracked_connection *t = find_tracked(d, connection);
    if (t != NULL) t->busy = 1;
    pthread_mutex_unlock(&d->lock);
    return d->callbacks.request_started(d->context, connection, uri);
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size,
                                      void **request_context) {
    (void)url;
    (void)version;
    struct shelf_http_daemon *d = cls;
    return d->callbacks.access(d->context, connection, method, upload_data, upload_data_size, request_context) ? MHD_YES
                                                                                                                : MHD_NO;
}

static void completed(void *cls, struct MHD_Connection *connection, void **request_context,
                      enum MHD_RequestTerminationCode reason) {
    struct shelf_http_daemon *d = cls;
    // Idle before Swift hears of the end (the access log): whoever waits for the log may count on it.
    pthread_mutex_lock(&d->lock);
    struct tracked_connection *t = find_tracked(d, connection);
    if (t != NULL) {
        t->busy = 0;
        t->last_used = ++d->clock;
    }
    pthread_mutex_unlock(&d->lock);
    d->callbacks.completed(d->context, connection, request_context, (int)reason);
}

int shelf_http_tls_supported(void) { return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES; }

shelf_http_daemon *shelf_http_start(const char *address, uint16_t port, const struct shelf_http_options *options,
                                    const struct shelf_http_callbacks *callbacks, void *context, char *error,
                                    size_t error_size) {
    if (error_size > 0) error[0] = 0;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
    struct sockaddr *bind_address;
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    memset(&v4, 0, sizeof v4);
    memset(&v6, 0, sizeof v6);
    if (inet_pton(AF_INET, address, &v4.sin_addr) == 1) {
        v4.sin_family = AF_INET;
        v4.sin_port = htons(port);
        bind_address = (struct sockaddr *)&v4;
    } else if (inet_pton(AF_INET6, address, &v6.sin6_addr) == 1) {
        v6.sin6_family = AF_INET6;
        v6.sin6_port = htons(port);
        bind_address = (struct sockaddr *)&v6;
        flags |= MHD_USE_IPv6;
    } else {
        snprintf(error, error_size, "'%s' is not an IPv4 or IPv6 address", address);
        return NULL;
    }
    flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_POLL;
    int tls = options->tls_cert_pem != NULL && options->tls_key_pem != NULL;
    if (tls) {
        if (!shelf_http_tls_supported()) {
            snprintf(error, error_size, "this libmicrohttpd was built without TLS support");
            return NULL;
        }
        flags |= MHD_USE_TLS;
    }

    struct shelf_http_daemon *d = calloc(1, sizeof *d);
    if (d == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    d->listen_fd = MHD_INVALID_SOCKET;
    pthread_mutex_init(&d->lock, NULL);
    d->per_address = options->connections_per_address;
    d->callbacks = *callbacks;
    d->context = context;

    struct MHD_OptionItem items[16];
    int n = 0;
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_SOCK_ADDR, 0, bind_address};
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)uri_logged, d};
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)completed, d};
    if (options->threads > 1) items[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, options->threads, NULL};
    if (options->connection_memory > 0)
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)options->connection_memory, NULL};
    if (options->connections > 0) items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, options->connections, NULL};
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)connection_notified, d};
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, options->idle_seconds, NULL};
    if (tls) {
        d->cert = strdup(options->tls_cert_pem);
        d->key = strdup(options->tls_key_pem);
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, d->cert};
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, d->key};
    }
    items[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};

    start_error = error;
    start_error_size = error_size;
    errno = 0;
    d->mhd = MHD_start_daemon(
        flags, port, admit, d, access_handler, d,
        /* The logger must come first, or libmicrohttpd warns on its own stderr. */
        MHD_OPTION_EXTERNAL_LOGGER, logger, d, MHD_OPTION_ARRAY, items, MHD_OPTION_END);
    int saved = errno;
    start_error = NULL;
    start_error_size = 0;
    if (d->mhd == NULL) {
        if (error_size > 0 && error[0] == 0)
            snprintf(error, error_size, "%s", saved != 0 ? strerror(saved) : "libmicrohttpd could not start");
        free(d->cert);
        free(d->key);
        pthread_mutex_destroy(&d->lock);
        free(d);
        return NULL;
    }
    return d;
}

uint16_t shelf_http_port(shelf_http_daemon *d) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}

void shelf_http_quiesce(shelf_http_daemon *d) {
    MHD_socket fd = MHD_quiesce_daemon(d->mhd);
    if (fd != MHD_INVALID_SOCKET) d->listen_fd = fd;
}

void shelf_http_stop(shelf_http_daemon *d) {
    MHD_stop_daemon(d->mhd);
    if (d->listen_fd != MHD_INVALID_SOCKET) close(d->listen_fd);
    free(d->cert);
    free(d->key);
    free(d->open);
    pthread_mutex_destroy(&d->lock);
    free(d);
}

shelf_http_response *shelf_http_response_buffer(const void *data, size_t size) {
    return MHD_create_response_from_buffer(size, (void *)data, MHD_RESPMEM_MUST_COPY);
}

shelf_http_response *shelf_http_response_file(int fd, uint64_t offset, uint64_t length) {
    return MHD_create_response_from_fd_at_offset64(length, fd, offset);
}

shelf_http_response *shelf_http_response_reader(uint64_t size, ssize_t (*reader)(void *, uint64_t, char *, size_t), void *context,
                                                void (*release)(void *)) {
    return MHD_create_response_from_callback(size == UINT64_MAX ? MHD_SIZE_UNKNOWN : size, 32 * 1024, reader, context, release);
}

int shelf_http_response_header(shelf_http_response *response, const char *name, const char *value) {
    return MHD_add_response_header(response, name, value) == MHD_YES;
}

int shelf_http_queue(shelf_http_connection *connection, unsigned int status, shelf_http_response *response) {
    return MHD_queue_response(connection, status, response) == MHD_YES;
}

void shelf_http_response_release(shelf_http_response *response) { MHD_destroy_response(response); }

void shelf_http_suspend(shelf_http_connection *connection) { MHD_suspend_connection(connection); }

void shelf_http_resume(shelf_http_connection *connection) { MHD_resume_connection(connection); }

struct header_visit {
    void (*visit)(void *, const char *, size_t, const char *, size_t);
    void *context;
};

static enum MHD_Result visit_header(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                    const char *value, size_t value_size) {
    (void)kind;
    struct header_visit *v = cls;
    v->visit(v->context, key, key_size, value != NULL ? value : "", value != NULL ? value_size : 0);
    return MHD_YES;
}

void shelf_http_headers(shelf_http_connection *connection,
                        void (*visit)(void *, const char *, size_t, const char *, size_t), void *context) {
    struct header_visit v = {visit, context};
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, visit_header, &v);
}

void shelf_http_client_address(shelf_http_connection *connection, char *buffer, size_t size) {
    if (size > 0) buffer[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, buffer, (socklen_t)size);
    else if (address->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, buffer, (socklen_t)size);
}

unsigned int shelf_http_status(shelf_http_connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_HTTP_STATUS);
    return info != NULL ? info->http_status : 0;
}

const char *shelf_http_version(void) { return MHD_get_version(); }
