#include "CWebSocketsShim.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#if defined(__linux__) && __has_include(<ev.h>)
#include <ev.h>
#define MAJLIS_HAVE_LIBEV 1
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

int majlis_thread_id(void) {
#if defined(__linux__)
    // Asked on every service-thread callback: the system call once per thread, then remembered.
    static __thread int cached = 0;
    if (cached == 0) cached = (int)syscall(SYS_gettid);
    return cached;
#else
    return 0;
#endif
}

size_t majlis_lws_pre(void) { return LWS_PRE; }

static int fd_ceiling = 0;

int majlis_lws_fd_ceiling(void) { return fd_ceiling; }

/* libwebsockets' logging is the process's: the most any part asked for. A client alone asks for
   none (-1: it reports its failures itself, so a bot or an app's stderr gets no raw "E: SSL
   error" line); a server asks for its errors (0), and keeps them when it opens relay clients. */
static int log_wanted = -2;
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void majlis_lws_set_logging(int verbose) {
    pthread_mutex_lock(&log_lock);
    if (verbose > log_wanted) {
        log_wanted = verbose;
        lws_set_log_level(verbose < 0 ? 0 : verbose ? (LLL_ERR | LLL_WARN) : LLL_ERR, NULL);
    }
    pthread_mutex_unlock(&log_lock);
}

/* The protocol lists contexts are made with, one per (callback, buffer size): libwebsockets may
   point at a list for as long as its context lives, so they live as long as the process, and
   every context with the same settings shares one. */
#define MAJLIS_PROTOCOL_LISTS 8
static struct lws_protocols protocol_lists[MAJLIS_PROTOCOL_LISTS][2];
static pthread_mutex_t protocol_lists_lock = PTHREAD_MUTEX_INITIALIZER;

static struct lws_protocols *make_protocols(lws_callback_function *callback, size_t rx_buffer_size) {
    struct lws_protocols *found = NULL;
    pthread_mutex_lock(&protocol_lists_lock);
    for (int i = 0; i < MAJLIS_PROTOCOL_LISTS && !found; i++) {
        struct lws_protocols *list = protocol_lists[i];
        if (list[0].callback == NULL) {
            list[0].name = "majlis";
            list[0].callback = callback;
            list[0].per_session_data_size = 0;
            list[0].rx_buffer_size = rx_buffer_size;
        }
        if (list[0].callback == callback && list[0].rx_buffer_size == rx_buffer_size) found = list;
    }
    pthread_mutex_unlock(&protocol_lists_lock);
    return found; /* list[1] is the zeroed terminator */
}

/* The settings servers and clients share; returns 0 when out of memory. */
static int base_info(struct lws_context_creation_info *info, lws_callback_function *callback, void *user,
                     size_t rx_buffer_size) {
    memset(info, 0, sizeof *info);
    info->protocols = make_protocols(callback, rx_buffer_size);
    info->user = user;
    info->gid = -1;
    info->uid = -1;
    info->options = LWS_SERVER_OPTION_VALIDATE_UTF8;
    return info->protocols != NULL;
}

/* Creates the context on an event loop of its own where libev is at hand (epoll: waking for one
   socket costs the same with 10 or 10,000 open), else on libwebsockets' poll() loop (each wake-up
   scans every socket). `*event_loop` is the loop, or NULL. */
static struct lws_context *create_context(struct lws_context_creation_info *info, void **event_loop) {
    *event_loop = NULL;
#if defined(MAJLIS_HAVE_LIBEV)
    /* Its own signal handling stays the process's: libev leaves the signal mask alone, and a
       loop handed in ("foreign") gets no SIGINT watcher from libwebsockets. */
    struct ev_loop *loop = ev_loop_new(EVBACKEND_EPOLL | EVFLAG_NOSIGMASK | EVFLAG_NOENV);
    if (loop) {
        void *loops[1] = {loop};
        info->options |= LWS_SERVER_OPTION_LIBEV;
        info->foreign_loops = loops;
        struct lws_context *context = lws_create_context(info);
        info->foreign_loops = NULL;
        if (context) {
            *event_loop = loop;
            return context;
        }
        ev_loop_destroy(loop);
        info->options &= ~(uint64_t)LWS_SERVER_OPTION_LIBEV;
    }
#endif
    return lws_create_context(info);
}

int majlis_lws_service(struct lws_context *context, void *event_loop, int no_wait) {
#if defined(MAJLIS_HAVE_LIBEV)
    if (event_loop) {
        ev_run((struct ev_loop *)event_loop, no_wait ? EVRUN_NOWAIT : EVRUN_ONCE);
        return 0;
    }
#endif
    (void)no_wait;
    return lws_service(context, 0);
}

void majlis_lws_destroy(struct lws_context *context, void *event_loop) {
    lws_context_destroy(context);
#if defined(MAJLIS_HAVE_LIBEV)
    if (event_loop) ev_loop_destroy((struct ev_loop *)event_loop);
#endif
}

struct lws_context *majlis_lws_create_server(const char *iface, int port, lws_callback_function *callback,
                                             void *user, const char *cert_path, const char *key_path,
                                             size_t rx_buffer_size, void **event_loop) {
    struct lws_context_creation_info info;
    if (!base_info(&info, callback, user, rx_buffer_size)) return NULL;
    info.port = port;
    info.iface = iface;
    info.options |= LWS_SERVER_OPTION_DISABLE_IPV6;
    /* A connection whose descriptor falls in the last reserve of the process's file descriptors
       (which the store, the media socket and the rest need) is hung up at once (see
       majlis_lws_fd_ceiling), so accept() never fails with EMFILE and spins. Not through
       fd_limit_per_thread: below the ulimit, that makes libwebsockets find the connection of
       every socket event by a linear search of its whole table. */
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur >= 64) {
        rlim_t reserve = limit.rlim_cur / 4 < 128 ? limit.rlim_cur / 4 : 128;
        fd_ceiling = (int)(limit.rlim_cur - reserve);
    }
    if (cert_path && key_path) {
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = cert_path;
        info.ssl_private_key_filepath = key_path;
        /* HTTP/1.1 only: libwebsockets reads headers it does not know (tus's Upload-Offset and
           Tus-Resumable, Idempotency-Key) only on HTTP/1 connections, and a browser or libcurl
           offered h2 would send them unread. */
        info.alpn = "http/1.1";
    }
    return create_context(&info, event_loop);
}

struct lws_context *majlis_lws_create_client(lws_callback_function *callback, void *user,
                                             size_t rx_buffer_size, void **event_loop) {
    struct lws_context_creation_info info;
    if (!base_info(&info, callback, user, rx_buffer_size)) return NULL;
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    /* The service loop checks a client's messages for UTF-8 itself: lws 4.1's client corrupts
       its heap when it closes for bad UTF-8 in a frame longer than about 10 KB. */
    info.options &= ~(uint64_t)LWS_SERVER_OPTION_VALIDATE_UTF8;
    return create_context(&info, event_loop);
}

struct lws *majlis_lws_client_connect(struct lws_context *context, const char *host, int port,
                                      const char *path, int use_tls, void *opaque) {
    struct lws_client_connect_info info;
    memset(&info, 0, sizeof info);
    info.context = context;
    info.address = host;
    info.port = port;
    info.path = path;
    info.host = host;
    info.origin = host;
    info.protocol = NULL;
    info.local_protocol_name = "majlis";
    info.opaque_user_data = opaque;
    info.ssl_connection = use_tls ? LCCSCF_USE_SSL : 0;
    return lws_client_connect_via_info(&info);
}

/* Appends `text` (length bytes) percent-encoded: all but RFC 3986's unreserved characters. */
static int majlis_append_encoded(char *out, int used, int capacity, const char *text, int length) {
    static const char hex[] = "0123456789ABCDEF";
    for (int index = 0; index < length; index++) {
        unsigned char c = (unsigned char)text[index];
        int plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
        if (used + (plain ? 1 : 3) + 1 > capacity) return -1;
        if (plain) {
            out[used++] = (char)c;
        } else {
            out[used++] = '%';
            out[used++] = hex[c >> 4];
            out[used++] = hex[c & 15];
        }
    }
    out[used] = 0;
    return used;
}

/* The query's arguments, which libwebsockets has split at `&` and percent-decoded, encoded
 * again (name, `=`, value) and joined with `&`: one decoding of the result gives each argument
 * as it was sent, whatever `&`, `=` or `%` it holds. 0 when there is none; what does not fit in
 * `capacity` is left out. */
int majlis_lws_http_query(struct lws *wsi, char *out, int capacity) {
    int used = 0;
    out[0] = 0;
    for (int index = 0; index < 32; index++) {
        char fragment[2048];
        int length = lws_hdr_copy_fragment(wsi, fragment, sizeof fragment, WSI_TOKEN_HTTP_URI_ARGS, index);
        if (length <= 0) break;
        const char *equals = memchr(fragment, '=', (size_t)length);
        int name = equals ? (int)(equals - fragment) : length;
        int start = used;
        if (used > 0) {
            if (used + 2 > capacity) break;
            out[used++] = '&';
        }
        int next = majlis_append_encoded(out, used, capacity, fragment, name);
        if (next >= 0 && equals) {
            if (next + 2 > capacity) next = -1;
            else {
                out[next++] = '=';
                next = majlis_append_encoded(out, next, capacity, equals + 1, length - name - 1);
            }
        }
        if (next < 0) {
            out[start] = 0;
            return start;
        }
        used = next;
    }
    return used;
}

int majlis_lws_http_respond(struct lws *wsi, unsigned int status, const char *content_type, const char *extra_headers,
                            const unsigned char *body, size_t body_len, int head_only) {
    unsigned char buffer[LWS_PRE + 2048];
    unsigned char *start = buffer + LWS_PRE, *p = start, *end = buffer + sizeof buffer - 1;
    /* An empty type: none (an answer without a body, as tus has them). */
    if (lws_add_http_common_headers(wsi, status, content_type && *content_type ? content_type : NULL, (lws_filepos_t)body_len, &p, end))
        return 1;
    /* "Name: value\n" lines; the name is given to lws lower-cased with its colon. */
    const char *line = extra_headers;
    while (line && *line) {
        const char *newline = strchr(line, '\n');
        size_t length = newline ? (size_t)(newline - line) : strlen(line);
        const char *colon = memchr(line, ':', length);
        if (colon && colon > line && (size_t)(colon - line) < 64) {
            char name[66];
            size_t name_length = (size_t)(colon - line);
            for (size_t i = 0; i < name_length; i++) name[i] = (char)((line[i] >= 'A' && line[i] <= 'Z') ? line[i] + 32 : line[i]);
            name[name_length] = ':';
            name[name_length + 1] = 0;
            const char *value = colon + 1;
            while (value < line + length && *value == ' ') value++;
            if (lws_add_http_header_by_name(wsi, (const unsigned char *)name, (const unsigned char *)value,
                                            (int)(line + length - value), &p, end))
                return 1;
        }
        line = newline ? newline + 1 : NULL;
    }
    if (lws_finalize_write_http_header(wsi, start, &p, end))
        return 1;
    if (body_len > 0 && !head_only) {
        unsigned char *copy = malloc(LWS_PRE + body_len);
        if (!copy) return 1;
        memcpy(copy + LWS_PRE, body, body_len);
        int written = lws_write(wsi, copy + LWS_PRE, body_len, LWS_WRITE_HTTP_FINAL);
        free(copy);
        if (written < (int)body_len) return 1;
    }
    return lws_http_transaction_completed(wsi) ? 1 : 0;
}

int majlis_lws_message_complete(struct lws *wsi) {
    return lws_is_final_fragment(wsi) && lws_remaining_packet_payload(wsi) == 0;
}

int majlis_tls_certificate_fingerprint(const char *path, unsigned char *out) {
    FILE *file = fopen(path, "r");
    if (!file) return 0;
    X509 *certificate = PEM_read_X509(file, NULL, NULL, NULL);
    fclose(file);
    if (!certificate) return 0;
    unsigned int length = 0;
    int ok = X509_digest(certificate, EVP_sha256(), out, &length) == 1 && length == 32;
    X509_free(certificate);
    return ok;
}

int majlis_tls_trust_pinned(void *store_context, const unsigned char *fingerprint) {
    X509_STORE_CTX *context = store_context;
    X509 *server = X509_STORE_CTX_get0_cert(context);
    unsigned char digest[32];
    unsigned int length = 0;
    if (!server || X509_digest(server, EVP_sha256(), digest, &length) != 1 || length != 32) return 0;
    if (CRYPTO_memcmp(digest, fingerprint, 32) != 0) return 0;
    X509_STORE_CTX_set_error(context, X509_V_OK);
    return 1;
}

const char *majlis_tls_verify_error(void *store_context) {
    return X509_verify_cert_error_string(X509_STORE_CTX_get_error((X509_STORE_CTX *)store_context));
}
