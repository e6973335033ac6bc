#ifndef SHELF_HTTP_H
#define SHELF_HTTP_H
// A small C face for libmicrohttpd: Swift cannot call its variadic MHD_start_daemon nor take its
// va_list logger, and keeping <microhttpd.h> out of this header keeps its whole API out of Swift.

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct shelf_http_daemon shelf_http_daemon;
typedef struct MHD_Connection shelf_http_connection;
typedef struct MHD_Response shelf_http_response;

/// Start-up settings; see HTTPLimits on the Swift side.
struct shelf_http_options {
    unsigned int threads;
    size_t connection_memory;
    unsigned int connections;
    unsigned int connections_per_address;
    unsigned int idle_seconds;
    const char *tls_cert_pem; ///< NULL for plain HTTP.
    const char *tls_key_pem;
};

/// The callbacks into Swift; `context` is the one given to shelf_http_start.
struct shelf_http_callbacks {
    /// A request line arrived: returns the per-request context (raw target, not decoded).
    void *(*request_started)(void *context, shelf_http_connection *connection, const char *raw_target);
    /// libmicrohttpd's access handler; returns 1 to go on, 0 to close the connection.
    int (*access)(void *context, shelf_http_connection *connection, const char *method,
                  const char *upload_data, size_t *upload_data_size, void **request_context);
    /// The request ended (`reason` is MHD_RequestTerminationCode; 0 = sent completely).
    void (*completed)(void *context, shelf_http_connection *connection, void **request_context, int reason);
    /// A formatted error message from libmicrohttpd.
    void (*error_log)(void *context, const char *message);
    /// Whether a new connection from `address` (an IP literal) is exempt from the per-address
    /// limit (a trusted reverse proxy, whose clients are limited per request instead); may be NULL.
    int (*unlimited)(void *context, const char *address);
};

/// Starts a daemon on `address` (an IPv4 or IPv6 literal) and `port` (0: any free port). On failure
/// returns NULL and writes a reason into `error` (at most `error_size` bytes).
shelf_http_daemon *shelf_http_start(const char *address, uint16_t port, const struct shelf_http_options *options,
                                    const struct shelf_http_callbacks *callbacks, void *context,
                                    char *error, size_t error_size);
/// The port the daemon listens on.
uint16_t shelf_http_port(shelf_http_daemon *daemon);
/// Whether TLS support was compiled into libmicrohttpd.
int shelf_http_tls_supported(void);
/// Stops accepting new connections; existing ones go on.
void shelf_http_quiesce(shelf_http_daemon *daemon);
/// Closes every connection, joins the threads and frees the daemon.
void shelf_http_stop(shelf_http_daemon *daemon);

/// A response holding a copy of `size` bytes.
shelf_http_response *shelf_http_response_buffer(const void *data, size_t size);
/// A response sending `length` bytes of `fd` from `offset` (sendfile where possible); takes the fd.
shelf_http_response *shelf_http_response_file(int fd, uint64_t offset, uint64_t length);
/// A response of `size` bytes (UINT64_MAX: unknown, sent chunked) pulled through `reader`, which
/// returns bytes written, 0 after suspending the connection, -1 at the end or -2 on error;
/// `release` frees `context`.
shelf_http_response *shelf_http_response_reader(uint64_t size, ssize_t (*reader)(void *context, uint64_t position, char *buffer, size_t max),
                                                void *context, void (*release)(void *context));
/// Adds a header; 0 if libmicrohttpd refused it.
int shelf_http_response_header(shelf_http_response *response, const char *name, const char *value);
/// Queues `response` with `status` on `connection`; 0 on failure.
int shelf_http_queue(shelf_http_connection *connection, unsigned int status, shelf_http_response *response);
/// Drops the caller's reference to `response` (the queued connection keeps its own).
void shelf_http_response_release(shelf_http_response *response);

/// Parks a connection (no polling, no thread held) until shelf_http_resume.
void shelf_http_suspend(shelf_http_connection *connection);
/// Unparks a connection; callable from any thread.
void shelf_http_resume(shelf_http_connection *connection);

/// Calls `visit` for every request header.
void shelf_http_headers(shelf_http_connection *connection,
                        void (*visit)(void *context, const char *name, size_t name_size, const char *value, size_t value_size),
                        void *context);
/// The client's address as text into `buffer`; empty when unknown.
void shelf_http_client_address(shelf_http_connection *connection, char *buffer, size_t size);
/// The status queued on the connection, or 0 when none was.
unsigned int shelf_http_status(shelf_http_connection *connection);

/// The libmicrohttpd version loaded at run time (MHD_get_version), e.g. "0.9.76".
const char *shelf_http_version(void);

#endif
