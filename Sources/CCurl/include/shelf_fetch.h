#ifndef SHELF_FETCH_H
#define SHELF_FETCH_H
// One HTTP(S) GET (or POST) through libcurl with the limits a server that fetches strangers' URLs needs:
// http and https only (redirects too), a redirect limit, a size limit, a time limit, and no
// connection to a private, loopback or link-local address unless allowed. <curl/curl.h> stays
// out of this header, so its API stays out of Swift.

#include <stddef.h>
#include <stdint.h>

/// A flag another thread sets to stop a running fetch (atomic: set and read on different threads).
struct shelf_fetch_cancel;

/// A new cleared flag (NULL when out of memory).
struct shelf_fetch_cancel *shelf_fetch_cancel_new(void);
/// Sets the flag: the fetch using it stops at its next progress callback.
void shelf_fetch_cancel_set(struct shelf_fetch_cancel *cancel);
/// Frees a flag no fetch uses any more.
void shelf_fetch_cancel_free(struct shelf_fetch_cancel *cancel);

/// What to fetch and within which limits.
struct shelf_fetch_options {
    const char *url;
    /// Where the body goes: a file descriptor opened for writing, or -1 for memory (`body`).
    int fd;
    /// The most body bytes taken; one more and the fetch fails with SHELF_FETCH_TOO_LARGE.
    int64_t max_bytes;
    long max_redirects;
    /// Whole-transfer and connect limits, in seconds.
    long timeout_seconds;
    long connect_timeout_seconds;
    /// Abort when fewer than 1 byte a second arrives for this long.
    long stall_seconds;
    /// 1: connections to private, loopback and link-local addresses are allowed.
    int allow_private;
    const char *user_agent;
    /// Stops the transfer at its next progress callback once set; may be NULL.
    struct shelf_fetch_cancel *cancel;
    /// A request body to POST (NULL: a GET); POSTs follow no redirects.
    const unsigned char *body;
    size_t body_length;
    /// Extra request header lines separated by '\n' ("Content-Type: application/json"), or NULL.
    const char *headers;
};

/// Outcomes besides success.
enum shelf_fetch_status {
    SHELF_FETCH_OK = 0,
    SHELF_FETCH_FAILED = 1,       ///< libcurl's error (message says which)
    SHELF_FETCH_HTTP_ERROR = 2,   ///< the server answered with a status of 400 or more
    SHELF_FETCH_TOO_LARGE = 3,    ///< more than max_bytes
    SHELF_FETCH_REFUSED = 4,      ///< a private or loopback address, not allowed
    SHELF_FETCH_CANCELLED = 5,
    SHELF_FETCH_TRUNCATED = 6,    ///< the connection closed before the declared length
    SHELF_FETCH_REDIRECTS = 7,    ///< more than max_redirects
    SHELF_FETCH_WRITE = 8,        ///< the file could not be written
};

/// What happened.
struct shelf_fetch_result {
    int status;
    long http_status;
    int64_t bytes;
    /// The body when fd was -1 (malloc'd; free with shelf_fetch_free).
    unsigned char *body;
    char content_type[128];
    char effective_url[1024];
    char message[512];
};

/// Fetches once; fills `result`. Safe to call from several threads at once.
int shelf_fetch(const struct shelf_fetch_options *options, struct shelf_fetch_result *result);
/// Frees a result's body.
void shelf_fetch_free(struct shelf_fetch_result *result);
/// libcurl's version string.
const char *shelf_fetch_curl_version(void);
/// 1 when `address` (an IPv4 or IPv6 literal) is private, loopback, link-local or otherwise not
/// a public unicast address; 0 when public; -1 when it is not an address literal.
int shelf_fetch_is_private_literal(const char *address);

#endif
