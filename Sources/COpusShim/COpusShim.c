#include "COpusShim.h"

int majlis_opus_encoder_set(OpusEncoder *encoder, int request, int value) {
    return opus_encoder_ctl(encoder, request, value);
}

int majlis_opus_encoder_get(OpusEncoder *encoder, int request, int *value) {
    return opus_encoder_ctl(encoder, request, value);
}

int majlis_opus_decoder_get(OpusDecoder *decoder, int request, int *value) {
    return opus_decoder_ctl(decoder, request, value);
}
