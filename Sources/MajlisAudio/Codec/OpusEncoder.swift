import COpus
import COpusShim

/// Opus encoder for 48 kHz 20 ms frames, mono or interleaved stereo (libopus: the VOIP
/// application tuned for voice, or with `music` the general audio application, full band). Use
/// from one thread.
public final class OpusEncoder {
    private let encoder: OpaquePointer
    private var packet = [UInt8](repeating: 0, count: 1500)
    /// 1, or 2 for interleaved stereo.
    public let channels: Int

    /// An encoder at `bitrate` bits per second with in-band FEC and DTX off; a stereo one codes
    /// every packet in stereo.
    public init(bitrate: Int = 32_000, music: Bool = false, channels: Int = 1) throws(AudioError) {
        var error: Int32 = 0
        let application = music ? OPUS_APPLICATION_AUDIO : OPUS_APPLICATION_VOIP
        self.channels = channels == 2 ? 2 : 1
        guard let made = opus_encoder_create(Int32(AudioFormat.sampleRate), Int32(self.channels), application, &error),
            error == OPUS_OK
        else { throw AudioError.codec("opus_encoder_create failed (\(error))") }
        encoder = made
        try set(OPUS_SET_SIGNAL_REQUEST, music ? OPUS_SIGNAL_MUSIC : OPUS_SIGNAL_VOICE)
        if music { try set(OPUS_SET_MAX_BANDWIDTH_REQUEST, OPUS_BANDWIDTH_FULLBAND) }
        if self.channels == 2 { try set(OPUS_SET_FORCE_CHANNELS_REQUEST, 2) }
        try setBitrate(bitrate)
    }

    deinit { opus_encoder_destroy(encoder) }

    private func set(_ request: Int32, _ value: Int32) throws(AudioError) {
        let result = majlis_opus_encoder_set(encoder, request, value)
        if result != OPUS_OK { throw AudioError.codec("opus_encoder_ctl(\(request), \(value)) failed (\(result))") }
    }

    private func query(_ request: Int32) -> Int32 {
        var value: Int32 = 0
        _ = majlis_opus_encoder_get(encoder, request, &value)
        return value
    }

    /// Target bitrate, 6,000 to 510,000 bits per second.
    public func setBitrate(_ bitrate: Int) throws(AudioError) { try set(OPUS_SET_BITRATE_REQUEST, Int32(bitrate)) }
    public var bitrate: Int { Int(query(OPUS_GET_BITRATE_REQUEST)) }

    /// In-band forward error correction, sized for `expectedLossPercent`.
    public func setFEC(_ enabled: Bool, expectedLossPercent: Int) throws(AudioError) {
        try set(OPUS_SET_INBAND_FEC_REQUEST, enabled ? 1 : 0)
        try set(OPUS_SET_PACKET_LOSS_PERC_REQUEST, Int32(max(0, min(100, expectedLossPercent))))
    }
    public var fecEnabled: Bool { query(OPUS_GET_INBAND_FEC_REQUEST) != 0 }

    /// Constrained VBR: each frame close to the target bitrate (for a path that cannot take
    /// the bursts of loud speech), instead of the target only on average.
    public func setConstrainedVBR(_ enabled: Bool) throws(AudioError) { try set(OPUS_SET_VBR_CONSTRAINT_REQUEST, enabled ? 1 : 0) }

    /// Discontinuous transmission: near-empty packets during silence.
    public func setDTX(_ enabled: Bool) throws(AudioError) { try set(OPUS_SET_DTX_REQUEST, enabled ? 1 : 0) }

    /// Encodes one 20 ms frame (960 samples a channel) into one packet.
    public func encode(_ frame: [Int16]) throws(AudioError) -> [UInt8] {
        guard frame.count == AudioFormat.frameSamples * channels else {
            throw AudioError.codec("a frame has \(AudioFormat.frameSamples * channels) samples, not \(frame.count)")
        }
        let capacity = Int32(packet.count)
        let length = frame.withUnsafeBufferPointer { pcm in
            packet.withUnsafeMutableBufferPointer { out in
                opus_encode(encoder, pcm.baseAddress!, Int32(AudioFormat.frameSamples), out.baseAddress!, capacity)
            }
        }
        guard length > 0 else { throw AudioError.codec("opus_encode failed (\(length))") }
        return Array(packet.prefix(Int(length)))
    }
}
