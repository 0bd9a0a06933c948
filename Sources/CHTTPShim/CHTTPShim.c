#include "CHTTPShim.h"
#include "CWebSocketsShim.h"

#include <curl/curl.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    majlis_http_answer *answer;
    size_t capacity;
    size_t limit;
    int overflow;
} collector;

static size_t collect(char *data, size_t size, size_t count, void *user) {
    collector *into = user;
    majlis_http_answer *answer = into->answer;
    size_t length = size * count;
    if (length > into->limit - answer->length) {
        into->overflow = 1;
        return 0;  // libcurl fails the transfer
    }
    if (answer->length + length > into->capacity) {
        size_t capacity = (answer->length + length) * 2;
        unsigned char *grown = realloc(answer->body, capacity);
        if (!grown) return 0;
        answer->body = grown;
        into->capacity = capacity;
    }
    memcpy(answer->body + answer->length, data, length);
    answer->length += length;
    return length;
}

// The answer's header lines, kept as they come (those of a redirect's or a 100's answer too:
// libcurl follows no redirect here).
static size_t collect_header(char *data, size_t size, size_t count, void *user) {
    majlis_http_answer *answer = user;
    size_t length = size * count;
    if (answer->headers_length + length > 64 * 1024) return 0;
    char *grown = realloc(answer->headers, answer->headers_length + length + 1);
    if (!grown) return 0;
    memcpy(grown + answer->headers_length, data, length);
    answer->headers = grown;
    answer->headers_length += length;
    answer->headers[answer->headers_length] = 0;
    return length;
}

// The certificate check of a connection that trusts one certificate: that one, and no other.
static int verify_pinned(X509_STORE_CTX *context, void *fingerprint) {
    if (majlis_tls_trust_pinned(context, fingerprint)) return 1;
    X509_STORE_CTX_set_error(context, X509_V_ERR_CERT_UNTRUSTED);
    return 0;
}

static CURLcode pin(CURL *curl, void *ssl_context, void *fingerprint) {
    (void)curl;
    SSL_CTX_set_cert_verify_callback(ssl_context, verify_pinned, fingerprint);
    return CURLE_OK;
}

static pthread_once_t started = PTHREAD_ONCE_INIT;
static void start(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

int majlis_http_call(const char *method, const char *url, const char *headers, const unsigned char *body, size_t body_length,
                     const unsigned char *pinned, long timeout_seconds, size_t limit, majlis_http_answer *answer) {
    memset(answer, 0, sizeof *answer);
    pthread_once(&started, start);
    CURL *curl = curl_easy_init();
    if (!curl) {
        snprintf(answer->error, sizeof answer->error, "libcurl could not start a request");
        return 0;
    }
    struct curl_slist *list = NULL;
    if (headers) {
        const char *line = headers;
        while (*line) {
            const char *end = strchr(line, '\n');
            size_t length = end ? (size_t)(end - line) : strlen(line);
            char *copy = strndup(line, length);
            if (copy) {
                list = curl_slist_append(list, copy);
                free(copy);
            }
            line += length + (end ? 1 : 0);
        }
    }
    unsigned char fingerprint[32];
    collector into = {answer, 0, limit, 0};
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_seconds);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &into);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, answer->error);
    curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, collect_header);
    curl_easy_setopt(curl, CURLOPT_HEADERDATA, answer);
    if (strcmp(method, "HEAD") == 0) curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    if (body) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_length);
    }
    if (pinned) {
        memcpy(fingerprint, pinned, sizeof fingerprint);
        // The host is not asked to be named: the certificate itself is what is trusted.
        curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
        curl_easy_setopt(curl, CURLOPT_SSL_CTX_FUNCTION, pin);
        curl_easy_setopt(curl, CURLOPT_SSL_CTX_DATA, fingerprint);
    }
    CURLcode result = curl_easy_perform(curl);
    if (result == CURLE_OK) {
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer->status);
    } else {
        answer->verify_failed = result == CURLE_PEER_FAILED_VERIFICATION;
        if (!answer->error[0]) snprintf(answer->error, sizeof answer->error, "%s", curl_easy_strerror(result));
        if (into.overflow) {
            snprintf(answer->error, sizeof answer->error, "the answer is longer than %zu bytes", limit);
        }
    }
    curl_slist_free_all(list);
    curl_easy_cleanup(curl);
    return result == CURLE_OK;
}

void majlis_http_answer_free(majlis_http_answer *answer) {
    free(answer->body);
    answer->body = NULL;
    answer->length = 0;
    free(answer->headers);
    answer->headers = NULL;
    answer->headers_length = 0;
}
