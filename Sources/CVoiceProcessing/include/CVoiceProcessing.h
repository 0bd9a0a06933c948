#ifndef MAJLIS_CVOICEPROCESSING_H
#define MAJLIS_CVOICEPROCESSING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// WebRTC's audio processing module (libwebrtc-audio-processing 0.3, the one PulseAudio uses)
/// behind a C interface: echo cancellation (extended filter, delay-agnostic), noise suppression,
/// automatic gain and voice detection on 10 ms frames of 16-bit mono audio. Majlis uses its voice
/// detection only: its echo canceller took the near end of double talk with the echo (PESQ-WB 1.2
/// against Speex's 2.8), its compressing gain cost clean speech 0.1-0.14, its noise suppressor
/// engaged on fluent speech.
typedef struct majlis_voice_processor majlis_voice_processor;

/// Noise suppression: -1 off, 0 low, 1 moderate, 2 high, 3 very high. Echo cancellation: -1 off,
/// 0 low, 1 moderate, 2 high suppression. Gain: 0 off, 1 adaptive digital (towards -3 dBFS).
majlis_voice_processor *majlis_voice_processor_create(int sample_rate);
void majlis_voice_processor_destroy(majlis_voice_processor *processor);
int majlis_voice_processor_configure(majlis_voice_processor *processor, int echo, int noise, int gain);

/// The far end (what the speaker plays), 10 ms, before it is played.
int majlis_voice_processor_render(majlis_voice_processor *processor, const int16_t *samples);
/// The near end (the microphone), 10 ms, processed in place. `delay_ms`: from a far-end frame
/// given to `render` to the capture that holds its echo.
int majlis_voice_processor_capture(majlis_voice_processor *processor, int16_t *samples, int delay_ms);

/// Whether the last captured frame held voice.
int majlis_voice_processor_has_voice(const majlis_voice_processor *processor);

#ifdef __cplusplus
}
#endif

#endif
