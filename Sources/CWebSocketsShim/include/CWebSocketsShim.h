#ifndef MAJLIS_CWEBSOCKETS_SHIM_H
#define MAJLIS_CWEBSOCKETS_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <libwebsockets.h>

/// The headroom lws_write needs before a payload (LWS_PRE, a macro Swift cannot import).
size_t majlis_lws_pre(void);

/* Accepted connections whose descriptor is at or above this are hung up (0: no limit). */
int majlis_lws_fd_ceiling(void);

/// Keeps libwebsockets' own logging to errors only (or errors and warnings when verbose != 0).
void majlis_lws_set_logging(int verbose);

/// Creates a server context with one protocol whose callback handles both HTTP and WebSocket.
/// `cert_path`/`key_path` may be NULL for plain ws://. Returns NULL on failure (port in use, bad
/// certificate). `user` is returned by lws_context_user(). `*event_loop` is set to the context's
/// own event loop (epoll, through libev) or NULL (libwebsockets' poll loop); pass it to
/// majlis_lws_service and majlis_lws_destroy.
struct lws_context *majlis_lws_create_server(const char *iface, int port, lws_callback_function *callback,
                                             void *user, const char *cert_path, const char *key_path,
                                             size_t rx_buffer_size, void **event_loop);

/// Creates a client-only context with one protocol served by `callback`; `event_loop` as above.
struct lws_context *majlis_lws_create_client(lws_callback_function *callback, void *user,
                                             size_t rx_buffer_size, void **event_loop);

/// Serves the context once: waits for something to happen and handles it. On the service thread.
/// `no_wait` (on an event loop only): handle what is ready, without waiting. Negative when the
/// context can serve no more.
int majlis_lws_service(struct lws_context *context, void *event_loop, int no_wait);

/// Destroys the context (closing every connection), then its event loop. On the service thread,
/// outside majlis_lws_service.
void majlis_lws_destroy(struct lws_context *context, void *event_loop);

/// Starts a client connection; `opaque` becomes the connection's opaque user data.
/// Must be called on the context's service thread. Returns NULL when it could not start.
/// Over TLS the server's certificate must verify against the system's certificate authorities
/// and name the host, unless the connection trusts it by fingerprint (majlis_tls_trust_pinned).
struct lws *majlis_lws_client_connect(struct lws_context *context, const char *host, int port,
                                      const char *path, int use_tls, void *opaque);

/// The query string of the HTTP request being served (its arguments joined with '&'), written
/// NUL-terminated into `out`; returns its length.
int majlis_lws_http_query(struct lws *wsi, char *out, int capacity);

/// Writes one complete HTTP response (headers and body); `extra_headers` holds further headers
/// as "Name: value" lines separated by '\n' (may be NULL). Returns non-zero when the connection
/// should be closed.
int majlis_lws_http_respond(struct lws *wsi, unsigned int status, const char *content_type, const char *extra_headers,
                            const unsigned char *body, size_t body_len, int head_only);

/// Writes the SHA-256 fingerprint (32 bytes) of the first certificate in the PEM file at `path`
/// to `out`; returns 1, or 0 when the file holds no certificate.
int majlis_tls_certificate_fingerprint(const char *path, unsigned char *out);

/// In a client's certificate check (`store_context` an X509_STORE_CTX): when the server's own
/// certificate has the SHA-256 `fingerprint`, clears the check's error and returns 1 (trusted);
/// otherwise returns 0 and leaves the check as it was.
int majlis_tls_trust_pinned(void *store_context, const unsigned char *fingerprint);

/// In a client's certificate check (`store_context` an X509_STORE_CTX): OpenSSL's words for
/// why the certificate did not verify.
const char *majlis_tls_verify_error(void *store_context);

/// 1 when the data delivered in the current RECEIVE callback completes a message.
int majlis_lws_message_complete(struct lws *wsi);

/// The calling thread's kernel id (for per-thread scheduling priority on Linux; 0 elsewhere).
int majlis_thread_id(void);

#endif
