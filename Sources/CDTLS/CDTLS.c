#include "CDTLS.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct majlis_dtls_identity {
    SSL_CTX *context;
    X509 *certificate;
};

struct majlis_dtls {
    SSL *ssl;
    BIO *incoming;
    BIO *outgoing;
};

int majlis_dtls_generate_pem(char *out, int capacity) {
    int written = -1;
    EVP_PKEY *key = EVP_EC_gen("P-256");
    X509 *certificate = X509_new();
    BIO *pem = BIO_new(BIO_s_mem());
    if (key == NULL || certificate == NULL || pem == NULL) goto done;
    uint64_t serial = 0;
    RAND_bytes((unsigned char *)&serial, sizeof serial);
    X509_set_version(certificate, 2);
    ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate), serial >> 1);
    X509_gmtime_adj(X509_getm_notBefore(certificate), -86400);
    X509_gmtime_adj(X509_getm_notAfter(certificate), 20L * 365 * 86400);
    X509_NAME *name = X509_get_subject_name(certificate);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"majlis", -1, -1, 0);
    X509_set_issuer_name(certificate, name);
    if (X509_set_pubkey(certificate, key) != 1 || X509_sign(certificate, key, EVP_sha256()) == 0) goto done;
    if (PEM_write_bio_PrivateKey(pem, key, NULL, NULL, 0, NULL, NULL) != 1 || PEM_write_bio_X509(pem, certificate) != 1) goto done;
    char *data = NULL;
    long length = BIO_get_mem_data(pem, &data);
    if (length <= 0 || length > capacity) goto done;
    memcpy(out, data, (size_t)length);
    written = (int)length;
done:
    BIO_free(pem);
    X509_free(certificate);
    EVP_PKEY_free(key);
    return written;
}

static int majlis_accept_any_certificate(int preverified, X509_STORE_CTX *store) {
    (void)preverified;
    (void)store;
    return 1;  // self-signed by design: the fingerprint from the SDP is checked after the handshake
}

majlis_dtls_identity *majlis_dtls_identity_load(const char *pem, int length) {
    BIO *bio = BIO_new_mem_buf(pem, length);
    if (bio == NULL) return NULL;
    EVP_PKEY *key = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL);
    X509 *certificate = PEM_read_bio_X509(bio, NULL, NULL, NULL);
    BIO_free(bio);
    SSL_CTX *context = SSL_CTX_new(DTLS_method());
    if (key == NULL || certificate == NULL || context == NULL || SSL_CTX_use_certificate(context, certificate) != 1 ||
        SSL_CTX_use_PrivateKey(context, key) != 1 || SSL_CTX_check_private_key(context) != 1 ||
        SSL_CTX_set_min_proto_version(context, DTLS1_2_VERSION) != 1 ||
        SSL_CTX_set_tlsext_use_srtp(context, "SRTP_AES128_CM_SHA1_80") != 0) {
        EVP_PKEY_free(key);
        X509_free(certificate);
        SSL_CTX_free(context);
        return NULL;
    }
    EVP_PKEY_free(key);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, majlis_accept_any_certificate);
    SSL_CTX_set_options(context, SSL_OP_NO_QUERY_MTU | SSL_OP_NO_TICKET);
    SSL_CTX_set_read_ahead(context, 1);
    majlis_dtls_identity *identity = calloc(1, sizeof *identity);
    if (identity == NULL) {
        X509_free(certificate);
        SSL_CTX_free(context);
        return NULL;
    }
    identity->context = context;
    identity->certificate = certificate;
    return identity;
}

void majlis_dtls_identity_free(majlis_dtls_identity *identity) {
    if (identity == NULL) return;
    SSL_CTX_free(identity->context);
    X509_free(identity->certificate);
    free(identity);
}

int majlis_dtls_identity_fingerprint(const majlis_dtls_identity *identity, uint8_t *out) {
    unsigned int length = 0;
    return X509_digest(identity->certificate, EVP_sha256(), out, &length) == 1 && length == 32;
}

majlis_dtls *majlis_dtls_new(majlis_dtls_identity *identity, int mtu, int client) {
    majlis_dtls *dtls = calloc(1, sizeof *dtls);
    if (dtls == NULL) return NULL;
    dtls->ssl = SSL_new(identity->context);
    dtls->incoming = BIO_new(BIO_s_mem());
    dtls->outgoing = BIO_new(BIO_s_mem());
    if (dtls->ssl == NULL || dtls->incoming == NULL || dtls->outgoing == NULL) {
        SSL_free(dtls->ssl);
        BIO_free(dtls->incoming);
        BIO_free(dtls->outgoing);
        free(dtls);
        return NULL;
    }
    BIO_set_mem_eof_return(dtls->incoming, -1);
    BIO_set_mem_eof_return(dtls->outgoing, -1);
    SSL_set_bio(dtls->ssl, dtls->incoming, dtls->outgoing);
    SSL_set_mtu(dtls->ssl, mtu);
    DTLS_set_link_mtu(dtls->ssl, mtu);
    if (client) {
        SSL_set_connect_state(dtls->ssl);
    } else {
        SSL_set_accept_state(dtls->ssl);
    }
    return dtls;
}

void majlis_dtls_free(majlis_dtls *dtls) {
    if (dtls == NULL) return;
    SSL_free(dtls->ssl);  // frees both BIOs
    free(dtls);
}

int majlis_dtls_feed(majlis_dtls *dtls, const uint8_t *data, int length) {
    ERR_clear_error();
    if (length > 0 && BIO_write(dtls->incoming, data, length) != length) return MAJLIS_DTLS_FAILED;
    if (!SSL_is_init_finished(dtls->ssl)) {
        int result = SSL_do_handshake(dtls->ssl);
        if (result == 1) return MAJLIS_DTLS_CONNECTED;
        int error = SSL_get_error(dtls->ssl, result);
        return error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE ? MAJLIS_DTLS_HANDSHAKING : MAJLIS_DTLS_FAILED;
    }
    // Connected: the peer sends no application data over DTLS here; read alerts (close_notify).
    uint8_t sink[512];
    int result = SSL_read(dtls->ssl, sink, sizeof sink);
    if (result <= 0) {
        int error = SSL_get_error(dtls->ssl, result);
        if (error == SSL_ERROR_ZERO_RETURN || (SSL_get_shutdown(dtls->ssl) & SSL_RECEIVED_SHUTDOWN)) return MAJLIS_DTLS_CLOSED;
        if (error != SSL_ERROR_WANT_READ) return MAJLIS_DTLS_FAILED;
    }
    return MAJLIS_DTLS_CONNECTED;
}

void majlis_dtls_close(majlis_dtls *dtls) {
    if (SSL_is_init_finished(dtls->ssl)) SSL_shutdown(dtls->ssl);
}

int majlis_dtls_handle_timeout(majlis_dtls *dtls) { return DTLSv1_handle_timeout(dtls->ssl) > 0; }

int majlis_dtls_take_output(majlis_dtls *dtls, uint8_t *out, int capacity) {
    size_t pending = BIO_ctrl_pending(dtls->outgoing);
    if (pending == 0) return 0;
    int read = BIO_read(dtls->outgoing, out, capacity);
    return read > 0 ? read : 0;
}

int majlis_dtls_peer_fingerprint(majlis_dtls *dtls, uint8_t *out) {
    X509 *peer = SSL_get1_peer_certificate(dtls->ssl);
    if (peer == NULL) return 0;
    unsigned int length = 0;
    int ok = X509_digest(peer, EVP_sha256(), out, &length) == 1 && length == 32;
    X509_free(peer);
    return ok;
}

int majlis_dtls_srtp_profile(majlis_dtls *dtls) {
    SRTP_PROTECTION_PROFILE *profile = SSL_get_selected_srtp_profile(dtls->ssl);
    return profile == NULL ? 0 : (int)profile->id;
}

int majlis_dtls_export_srtp(majlis_dtls *dtls, uint8_t *out, int length) {
    static const char label[] = "EXTRACTOR-dtls_srtp";
    return SSL_export_keying_material(dtls->ssl, out, (size_t)length, label, sizeof label - 1, NULL, 0, 0) == 1;
}

void majlis_dtls_last_error(char *out, int capacity) {
    unsigned long error = ERR_peek_last_error();
    if (error == 0) {
        snprintf(out, (size_t)capacity, "no OpenSSL error");
        return;
    }
    ERR_error_string_n(error, out, (size_t)capacity);
}
