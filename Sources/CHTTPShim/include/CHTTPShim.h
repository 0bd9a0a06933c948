#ifndef MAJLIS_HTTP_SHIM_H
#define MAJLIS_HTTP_SHIM_H

#include <stddef.h>

/// What one HTTP exchange brought back: the status (0 when no answer came), the body and the
/// answer's header lines as they came ("Name: value\r\n" each; both malloc'd, free with
/// majlis_http_answer_free) and, when the exchange failed, libcurl's words for why.
typedef struct {
    long status;
    unsigned char *body;
    size_t length;
    char *headers;
    size_t headers_length;
    int verify_failed;
    char error[256];
} majlis_http_answer;

/// Makes one HTTP/1.1 request with libcurl and waits for its answer (at most `timeout_seconds`).
/// `headers` holds "Name: value" lines separated by '\n' (may be NULL); `body` may be NULL.
/// Over https the server's certificate must verify against the system's authorities and name
/// the host, or, with `pinned` (a SHA-256 certificate fingerprint, 32 bytes), be exactly that
/// certificate, whatever host it names. An answer's body past `limit` bytes fails the request.
/// `HEAD` reads no body. Returns 1 when an answer came (of any status), 0 otherwise
/// (`answer->error` says why).
int majlis_http_call(const char *method, const char *url, const char *headers, const unsigned char *body, size_t body_length,
                     const unsigned char *pinned, long timeout_seconds, size_t limit, majlis_http_answer *answer);

/// Frees what majlis_http_call allocated in `answer`.
void majlis_http_answer_free(majlis_http_answer *answer);

#endif
