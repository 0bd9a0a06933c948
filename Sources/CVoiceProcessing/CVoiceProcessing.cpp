#include "CVoiceProcessing.h"

#include <webrtc/modules/audio_processing/include/audio_processing.h>

struct majlis_voice_processor {
    webrtc::AudioProcessing *apm;
    webrtc::StreamConfig stream;
    float buffer[480];
    int samples;
};

static const float scale = 32768.0f;

static void load(float *into, const int16_t *samples, int count) {
    for (int i = 0; i < count; i++) into[i] = samples[i] / scale;
}

extern "C" majlis_voice_processor *majlis_voice_processor_create(int sample_rate) {
    if (sample_rate != 8000 && sample_rate != 16000 && sample_rate != 32000 && sample_rate != 48000) return nullptr;
    webrtc::Config config;
    // The extended filter follows longer echo paths (a room, a phone on a table), and the
    // delay-agnostic mode finds the echo's delay itself when the one given is off.
    config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(true));
    config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(true));
    config.Set<webrtc::ExperimentalAgc>(new webrtc::ExperimentalAgc(false));
    webrtc::AudioProcessing *apm = webrtc::AudioProcessing::Create(config);
    if (!apm) return nullptr;
    majlis_voice_processor *processor = new majlis_voice_processor();
    processor->apm = apm;
    processor->stream = webrtc::StreamConfig(sample_rate, 1);
    processor->samples = sample_rate / 100;
    apm->high_pass_filter()->Enable(false);
    apm->voice_detection()->Enable(true);
    apm->echo_cancellation()->enable_metrics(true);
    apm->echo_cancellation()->enable_delay_logging(true);
    return processor;
}

extern "C" void majlis_voice_processor_destroy(majlis_voice_processor *processor) {
    if (!processor) return;
    delete processor->apm;
    delete processor;
}

extern "C" int majlis_voice_processor_configure(majlis_voice_processor *processor, int echo, int noise, int gain) {
    webrtc::AudioProcessing *apm = processor->apm;
    int status = 0;
    if (echo >= 0) {
        static const webrtc::EchoCancellation::SuppressionLevel levels[] = {
            webrtc::EchoCancellation::kLowSuppression, webrtc::EchoCancellation::kModerateSuppression,
            webrtc::EchoCancellation::kHighSuppression};
        status |= apm->echo_cancellation()->set_suppression_level(levels[echo > 2 ? 2 : echo]);
        status |= apm->echo_cancellation()->Enable(true);
    } else {
        status |= apm->echo_cancellation()->Enable(false);
    }
    if (noise >= 0) {
        static const webrtc::NoiseSuppression::Level levels[] = {
            webrtc::NoiseSuppression::kLow, webrtc::NoiseSuppression::kModerate,
            webrtc::NoiseSuppression::kHigh, webrtc::NoiseSuppression::kVeryHigh};
        status |= apm->noise_suppression()->set_level(levels[noise > 3 ? 3 : noise]);
        status |= apm->noise_suppression()->Enable(true);
    } else {
        status |= apm->noise_suppression()->Enable(false);
    }
    if (gain > 0) {
        status |= apm->gain_control()->set_mode(webrtc::GainControl::kAdaptiveDigital);
        status |= apm->gain_control()->set_target_level_dbfs(3);
        status |= apm->gain_control()->set_compression_gain_db(9);
        status |= apm->gain_control()->enable_limiter(true);
        status |= apm->gain_control()->Enable(true);
    } else {
        status |= apm->gain_control()->Enable(false);
    }
    return status;
}

extern "C" int majlis_voice_processor_render(majlis_voice_processor *processor, const int16_t *samples) {
    load(processor->buffer, samples, processor->samples);
    float *channels[1] = {processor->buffer};
    return processor->apm->ProcessReverseStream(channels, processor->stream, processor->stream, channels);
}

extern "C" int majlis_voice_processor_capture(majlis_voice_processor *processor, int16_t *samples, int delay_ms) {
    load(processor->buffer, samples, processor->samples);
    float *channels[1] = {processor->buffer};
    processor->apm->set_stream_delay_ms(delay_ms);
    int status = processor->apm->ProcessStream(channels, processor->stream, processor->stream, channels);
    for (int i = 0; i < processor->samples; i++) {
        float value = processor->buffer[i] * scale;
        samples[i] = (int16_t)(value > 32767.0f ? 32767.0f : value < -32768.0f ? -32768.0f : value);
    }
    return status;
}

extern "C" int majlis_voice_processor_has_voice(const majlis_voice_processor *processor) {
    return processor->apm->voice_detection()->stream_has_voice() ? 1 : 0;
}
