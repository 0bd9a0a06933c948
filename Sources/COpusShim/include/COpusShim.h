#ifndef MAJLIS_COPUS_SHIM_H
#define MAJLIS_COPUS_SHIM_H

#include <opus/opus.h>

/// opus_encoder_ctl is variadic, which Swift cannot call: these pass one int setting through.
int majlis_opus_encoder_set(OpusEncoder *encoder, int request, int value);
int majlis_opus_encoder_get(OpusEncoder *encoder, int request, int *value);
int majlis_opus_decoder_get(OpusDecoder *decoder, int request, int *value);

#endif
