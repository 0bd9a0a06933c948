#ifndef MAJLIS_CDTLS_H
#define MAJLIS_CDTLS_H

#include <stdint.h>

/// DTLS-SRTP (RFC 5764) over OpenSSL, as the media router needs it: a server-side DTLS 1.2
/// endpoint fed datagrams by the caller (memory BIOs, no socket), an ECDSA P-256 identity,
/// SHA-256 fingerprints and the SRTP keying material.

/// A certificate and its key, with an SSL_CTX made from them.
typedef struct majlis_dtls_identity majlis_dtls_identity;
/// One peer's DTLS association.
typedef struct majlis_dtls majlis_dtls;

/// Makes a new self-signed ECDSA P-256 certificate (CN=majlis) and writes the key and the
/// certificate as PEM into `out`; returns the length written, or -1.
int majlis_dtls_generate_pem(char *out, int capacity);
/// Reads an identity from PEM (key and certificate); NULL if it is not one.
majlis_dtls_identity *majlis_dtls_identity_load(const char *pem, int length);
void majlis_dtls_identity_free(majlis_dtls_identity *identity);
/// The SHA-256 digest of the identity's certificate (32 bytes).
int majlis_dtls_identity_fingerprint(const majlis_dtls_identity *identity, uint8_t *out);

enum {
    MAJLIS_DTLS_HANDSHAKING = 0,
    MAJLIS_DTLS_CONNECTED = 1,
    MAJLIS_DTLS_FAILED = -1,
    MAJLIS_DTLS_CLOSED = -2,
};

/// A new association, in the client role when `client` is non-zero (it then sends the first
/// flight on the first feed), with a link MTU of `mtu` bytes.
majlis_dtls *majlis_dtls_new(majlis_dtls_identity *identity, int mtu, int client);
void majlis_dtls_free(majlis_dtls *dtls);
/// Feeds one received datagram; returns a MAJLIS_DTLS_ state.
int majlis_dtls_feed(majlis_dtls *dtls, const uint8_t *data, int length);
/// Ends the association: queues a close_notify alert to send.
void majlis_dtls_close(majlis_dtls *dtls);
/// Retransmits the last flight if its timer ran out; returns 1 if it did.
int majlis_dtls_handle_timeout(majlis_dtls *dtls);
/// Takes up to `capacity` bytes of records waiting to be sent; returns how many.
int majlis_dtls_take_output(majlis_dtls *dtls, uint8_t *out, int capacity);
/// The SHA-256 digest of the peer's certificate (32 bytes); 0 if there is none.
int majlis_dtls_peer_fingerprint(majlis_dtls *dtls, uint8_t *out);
/// The negotiated SRTP protection profile's id (RFC 5764), or 0.
int majlis_dtls_srtp_profile(majlis_dtls *dtls);
/// The keying material for DTLS-SRTP ("EXTRACTOR-dtls_srtp"), `length` bytes; 1 on success.
int majlis_dtls_export_srtp(majlis_dtls *dtls, uint8_t *out, int length);
/// OpenSSL's last error, as text, for logs.
void majlis_dtls_last_error(char *out, int capacity);

#endif
