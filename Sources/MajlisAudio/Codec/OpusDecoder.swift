import COpus

/// Opus decoder for 48 kHz 20 ms frames, mono or interleaved stereo (a stereo decoder plays mono
/// packets in both channels), with loss concealment and FEC recovery. Use from one thread.
public final class OpusDecoder {
    private let decoder: OpaquePointer
    private var pcm: [Int16]
    /// 1, or 2 for interleaved stereo.
    public let channels: Int

    public init(channels: Int = 1) throws(AudioError) {
        var error: Int32 = 0
        self.channels = channels == 2 ? 2 : 1
        pcm = [Int16](repeating: 0, count: AudioFormat.frameSamples * 6 * self.channels)
        guard let made = opus_decoder_create(Int32(AudioFormat.sampleRate), Int32(self.channels), &error), error == OPUS_OK else {
            throw AudioError.codec("opus_decoder_create failed (\(error))")
        }
        decoder = made
    }

    deinit { opus_decoder_destroy(decoder) }

    private func run(_ packet: [UInt8]?, samples: Int, fec: Bool) throws(AudioError) -> [Int16] {
        let count: Int32 = pcm.withUnsafeMutableBufferPointer { out in
            if let packet, !packet.isEmpty {
                return packet.withUnsafeBufferPointer { data in
                    opus_decode(decoder, data.baseAddress, Int32(data.count), out.baseAddress!, Int32(samples), fec ? 1 : 0)
                }
            }
            return opus_decode(decoder, nil, 0, out.baseAddress!, Int32(samples), 0)
        }
        guard count > 0 else { throw AudioError.codec("opus_decode failed (\(count))") }
        return Array(pcm.prefix(Int(count) * channels))
    }

    /// Decodes one packet into PCM.
    public func decode(_ packet: [UInt8]) throws(AudioError) -> [Int16] {
        try run(packet, samples: pcm.count / channels, fec: false)
    }

    /// A frame for a lost packet, made up by concealment (PLC).
    public func conceal() throws(AudioError) -> [Int16] {
        try run(nil, samples: AudioFormat.frameSamples, fec: false)
    }

    /// The frame before `nextPacket`, recovered from the FEC data it carries (when the sender
    /// had FEC on); otherwise concealment.
    public func recover(from nextPacket: [UInt8]) throws(AudioError) -> [Int16] {
        try run(nextPacket, samples: AudioFormat.frameSamples, fec: true)
    }
}
