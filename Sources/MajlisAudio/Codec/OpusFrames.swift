import COpus

/// Joins 20 ms Opus packets into one longer packet (fewer packets, fewer header bytes on a
/// thin link) and splits such a packet back into its 20 ms frames (libopus's repacketizer;
/// RFC 6716 section 3.2). Frames keep everything they carry, in-band FEC included.
public enum OpusFrames {
    /// How many frames `packet` holds (nil: not an Opus packet).
    public static func count(_ packet: [UInt8]) -> Int? {
        guard !packet.isEmpty else { return nil }
        let frames = packet.withUnsafeBufferPointer { opus_packet_get_nb_frames($0.baseAddress!, Int32($0.count)) }
        return frames > 0 ? Int(frames) : nil
    }

    /// One packet holding `packets`' frames in order (at most 120 ms in all, same mode and
    /// bandwidth); nil when they cannot be joined.
    public static func join(_ packets: [[UInt8]]) -> [UInt8]? {
        guard packets.count > 1 else { return packets.first }
        return repack(packets) { repacketizer, total in
            var out = [UInt8](repeating: 0, count: total + 16)
            let length = out.withUnsafeMutableBufferPointer { opus_repacketizer_out(repacketizer, $0.baseAddress!, Int32($0.count)) }
            return length > 0 ? Array(out.prefix(Int(length))) : nil
        }
    }

    /// `packets` joined into as few packets as they allow, in order: frames of one packet must
    /// share the encoder's mode, bandwidth and frame size (the first six bits of their TOC
    /// byte), which changes now and then between speech and pauses.
    public static func joinRuns(_ packets: [[UInt8]]) -> [[UInt8]] {
        var runs: [[[UInt8]]] = []
        for packet in packets {
            if let last = runs.last?.last, let first = packet.first, let previous = last.first, first & 0xFC == previous & 0xFC {
                runs[runs.count - 1].append(packet)
            } else {
                runs.append([packet])
            }
        }
        return runs.flatMap { run in join(run).map { [$0] } ?? run }
    }

    /// The frames of `packet`, each as a packet of its own (a one-frame packet as it is); nil
    /// when it is not a valid Opus packet.
    public static func split(_ packet: [UInt8]) -> [[UInt8]]? {
        guard let frames = count(packet) else { return nil }
        guard frames > 1 else { return [packet] }
        return repack([packet]) { repacketizer, total in
            var result: [[UInt8]] = []
            var out = [UInt8](repeating: 0, count: total + 16)
            for index in 0..<Int32(frames) {
                let length = out.withUnsafeMutableBufferPointer {
                    opus_repacketizer_out_range(repacketizer, index, index + 1, $0.baseAddress!, Int32($0.count))
                }
                guard length > 0 else { return nil }
                result.append(Array(out.prefix(Int(length))))
            }
            return result
        }
    }

    /// Feeds `packets` to a repacketizer (which reads them in place, so they are laid out in
    /// one buffer that lives until `body` returns) and runs `body` on it.
    private static func repack<T>(_ packets: [[UInt8]], _ body: (OpaquePointer, Int) -> T?) -> T? {
        guard let repacketizer = opus_repacketizer_create() else { return nil }
        defer { opus_repacketizer_destroy(repacketizer) }
        let joined = packets.flatMap { $0 }
        return joined.withUnsafeBufferPointer { all -> T? in
            var offset = 0
            for packet in packets {
                guard !packet.isEmpty, opus_repacketizer_cat(repacketizer, all.baseAddress! + offset, Int32(packet.count)) == OPUS_OK else { return nil }
                offset += packet.count
            }
            return body(repacketizer, joined.count)
        }
    }
}
