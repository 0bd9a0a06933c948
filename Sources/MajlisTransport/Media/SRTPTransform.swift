import CCrypto

/// SRTP and SRTCP (RFC 3711) with the suite AES_CM_128_HMAC_SHA1_80, written over OpenSSL's
/// libcrypto: one AES-128 context and one HMAC-SHA1 context per direction of traffic, made
/// once, so protecting a packet allocates nothing. The counter-mode keystream is the AES
/// encryption of the packet's counter blocks, all in one call on a context that is never
/// re-keyed (re-initialising a CTR context for every packet's IV cost more than the AES). The
/// media router uses it (Debian's libsrtp2 is built on NSS, which makes a new crypto context for
/// every packet); it interoperates with `SRTPSession` (libsrtp2) byte for byte.
///
/// Keeps per-SSRC state (rollover counter, highest sequence number, replay window) for any
/// number of SSRCs. Not thread-safe: one thread at a time.
public final class SRTPTransform {
    private struct Stream {
        var rollover: UInt32 = 0
        var highest: UInt16 = 0
        /// Replay window over packet indexes: bit k of `seen` is index `top - k`.
        var top: UInt64 = 0
        var seen = [UInt64](repeating: 0, count: 8)
        /// SRTCP: the next index to send, or the receive window over indexes.
        var controlIndex: UInt32 = 0
        var controlTop: UInt32 = 0
        var controlSeen: UInt64 = 0
        var started = false
        var controlStarted = false
    }

    private struct Context {
        /// AES-128 in ECB mode, no padding: it turns counter blocks into keystream.
        let cipher: OpaquePointer
        let mac: OpaquePointer
        /// The session salt, 14 bytes and two zero bytes (the IV's block counter), as two
        /// big-endian words.
        let salt: (high: UInt64, low: UInt64)
    }

    public let direction: SRTPSession.Direction
    private let rtp: Context
    private let rtcp: Context
    /// Per-SSRC state, kept for ever; at most `maxStreams` SSRCs are read (see `init`).
    private var streams: [UInt32: Stream] = [:]
    private let maxStreams: Int
    /// Counter blocks, then their keystream (`chunkBlocks` each), then the last HMAC.
    private let scratch: UnsafeMutableRawPointer
    private static let chunkBlocks = 64
    private var digest: UnsafeMutablePointer<UInt8> { (scratch + 2 * Self.chunkBlocks * 16).assumingMemoryBound(to: UInt8.self) }
    public static let tagLength = 10
    private static let windowSize: UInt64 = 512

    /// `maxStreams`: the most SSRCs an inbound transform reads; a packet under one more is
    /// refused before any work, and a new SSRC counts only once a packet under it is authentic.
    /// A server reading one peer gives a small bound (the peer's SSRCs come and go with its
    /// tracks): one that sent under ever new SSRCs grew the server without end (150,000 of them,
    /// 29 MiB). A client reading a room's speakers keeps the default.
    public init(key: [UInt8], direction: SRTPSession.Direction, maxStreams: Int = .max) throws(MediaError) {
        guard key.count == SRTPSession.keyLength else { throw MediaError.srtp("an SRTP key is \(SRTPSession.keyLength) bytes, not \(key.count)") }
        self.direction = direction
        self.maxStreams = maxStreams
        let masterKey = Array(key[0..<16])
        let masterSalt = Array(key[16..<30])
        func derive(_ label: UInt8, _ length: Int) throws(MediaError) -> [UInt8] {
            var start = masterSalt + [0, 0]
            start[7] ^= label
            var out = [UInt8](repeating: 0, count: length)
            guard let cipher = EVP_CIPHER_CTX_new() else { throw MediaError.srtp("no cipher context") }
            defer { EVP_CIPHER_CTX_free(cipher) }
            var written: Int32 = 0
            guard EVP_EncryptInit_ex(cipher, EVP_aes_128_ctr(), nil, masterKey, start) == 1,
                EVP_EncryptUpdate(cipher, &out, &written, out, Int32(length)) == 1
            else { throw MediaError.srtp("key derivation failed") }
            return out
        }
        func context(_ labels: (UInt8, UInt8, UInt8)) throws(MediaError) -> Context {
            let encryption = try derive(labels.0, 16)
            let authentication = try derive(labels.1, 20)
            let salt = try derive(labels.2, 14)
            guard let cipher = EVP_CIPHER_CTX_new(), EVP_EncryptInit_ex(cipher, EVP_aes_128_ecb(), nil, encryption, nil) == 1,
                EVP_CIPHER_CTX_set_padding(cipher, 0) == 1
            else {
                throw MediaError.srtp("cannot set up AES-128")
            }
            guard let algorithm = EVP_MAC_fetch(nil, "HMAC", nil), let mac = EVP_MAC_CTX_new(algorithm) else {
                throw MediaError.srtp("cannot set up HMAC")
            }
            EVP_MAC_free(algorithm)
            let initialized = "digest".withCString { name in
                "SHA1".withCString { value in
                    var parameters = [
                        OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: value), 0), OSSL_PARAM_construct_end(),
                    ]
                    return EVP_MAC_init(mac, authentication, authentication.count, &parameters)
                }
            }
            guard initialized == 1 else { throw MediaError.srtp("cannot key HMAC-SHA1") }
            var high: UInt64 = 0
            var low: UInt64 = 0
            for position in 0..<8 { high = high << 8 | UInt64(salt[position]) }
            for position in 8..<14 { low = low << 8 | UInt64(salt[position]) }
            return Context(cipher: cipher, mac: mac, salt: (high, low << 16))
        }
        scratch = UnsafeMutableRawPointer.allocate(byteCount: 2 * Self.chunkBlocks * 16 + 64, alignment: 16)
        rtp = try context((0, 1, 2))
        rtcp = try context((3, 4, 5))
    }

    deinit {
        for context in [rtp, rtcp] {
            EVP_CIPHER_CTX_free(context.cipher)
            EVP_MAC_CTX_free(context.mac)
        }
        scratch.deallocate()
    }

    // MARK: Primitives

    /// XORs the keystream for (`ssrc`, `index`) over `data`: AES of the counter blocks IV,
    /// IV + 1, ... where IV = salt ^ (ssrc << 64) ^ (index << 16) (RFC 3711 4.1.1).
    private func crypt(_ context: Context, ssrc: UInt32, index: UInt64, _ data: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        let high = context.salt.high ^ UInt64(ssrc)
        let low = context.salt.low ^ (index << 16)
        let counters = scratch
        let keystream = scratch + Self.chunkBlocks * 16
        var block = 0
        var done = 0
        while done < count {
            let blocks = min(Self.chunkBlocks, (count - done + 15) / 16)
            for slot in 0..<blocks {
                // The block counter is the IV's last 16 bits, zero in the IV itself.
                counters.storeBytes(of: high.bigEndian, toByteOffset: slot * 16, as: UInt64.self)
                counters.storeBytes(of: (low | UInt64(block + slot)).bigEndian, toByteOffset: slot * 16 + 8, as: UInt64.self)
            }
            var written: Int32 = 0
            guard EVP_EncryptUpdate(context.cipher, keystream.assumingMemoryBound(to: UInt8.self), &written,
                                    counters.assumingMemoryBound(to: UInt8.self), Int32(blocks * 16)) == 1,
                written == Int32(blocks * 16)
            else { return false }
            let length = min(blocks * 16, count - done)
            let target = data + done
            var position = 0
            while position + 8 <= length {
                let word = target.loadUnaligned(fromByteOffset: position, as: UInt64.self) ^ keystream.load(fromByteOffset: position, as: UInt64.self)
                target.storeBytes(of: word, toByteOffset: position, as: UInt64.self)
                position += 8
            }
            while position < length {
                let byte = target.load(fromByteOffset: position, as: UInt8.self) ^ keystream.load(fromByteOffset: position, as: UInt8.self)
                target.storeBytes(of: byte, toByteOffset: position, as: UInt8.self)
                position += 1
            }
            block += blocks
            done += length
        }
        return true
    }

    /// HMAC-SHA1 of `data` followed by the 4 bytes of `trailer`, into `digest`.
    private func authenticate(_ context: Context, _ data: UnsafeRawPointer, _ count: Int, trailer: UInt32) -> Bool {
        var suffix = trailer.bigEndian
        var length = 0
        guard EVP_MAC_init(context.mac, nil, 0, nil) == 1, EVP_MAC_update(context.mac, data.assumingMemoryBound(to: UInt8.self), count) == 1
        else { return false }
        let updated = withUnsafeBytes(of: &suffix) { EVP_MAC_update(context.mac, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), 4) }
        return updated == 1 && EVP_MAC_final(context.mac, digest, &length, 20) == 1
    }

    private func tagMatches(_ tag: UnsafeRawPointer) -> Bool {
        var difference: UInt8 = 0
        for position in 0..<Self.tagLength { difference |= digest[position] ^ tag.load(fromByteOffset: position, as: UInt8.self) }
        return difference == 0
    }

    /// RFC 3711 appendix A: the rollover counter a sequence number most likely belongs to.
    private static func guessRollover(_ stream: Stream, _ sequence: UInt16) -> UInt32 {
        guard stream.started else { return 0 }
        if stream.highest < 32_768 {
            return Int(sequence) - Int(stream.highest) > 32_768 ? stream.rollover &- 1 : stream.rollover
        }
        return Int(stream.highest) - 32_768 > Int(sequence) ? stream.rollover &+ 1 : stream.rollover
    }

    /// The rollover counter of a packet this side sends as `sequence`, noted in `stream`.
    private static func send(_ sequence: UInt16, on stream: inout Stream) -> UInt32 {
        let rollover = guessRollover(stream, sequence)
        note(&stream, sequence: sequence, rollover: rollover)
        return rollover
    }

    private static func note(_ stream: inout Stream, sequence: UInt16, rollover: UInt32) {
        if !stream.started || rollover == stream.rollover &+ 1 || (rollover == stream.rollover && sequence > stream.highest) {
            stream.rollover = rollover
            stream.highest = sequence
        }
        stream.started = true
    }

    private static func headerLength(_ bytes: UnsafeRawBufferPointer, _ length: Int) -> Int? {
        guard length >= 12, bytes[0] >> 6 == 2 else { return nil }
        var header = 12 + Int(bytes[0] & 0x0F) * 4
        if bytes[0] & 0x10 != 0 {
            guard header + 4 <= length else { return nil }
            header += 4 + (Int(bytes[header + 2]) << 8 | Int(bytes[header + 3])) * 4
        }
        return header <= length ? header : nil
    }

    private static func word(_ bytes: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
    }

    // MARK: RTP

    /// Protects the RTP packet in `buffer[0..<length]` where it lies (room for 10 more bytes
    /// needed); returns the SRTP length.
    public func protect(rtpIn buffer: UnsafeMutableRawBufferPointer, length: Int) throws(MediaError) -> Int {
        let bytes = UnsafeRawBufferPointer(buffer)
        guard let base = buffer.baseAddress, let header = Self.headerLength(bytes, length) else { throw MediaError.srtpRejected(-1) }
        guard length + Self.tagLength <= buffer.count else { throw MediaError.srtp("no room for the SRTP tag") }
        let ssrc = Self.word(bytes, 8)
        let sequence = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        let rollover = Self.send(sequence, on: &streams[ssrc, default: Stream()])
        let index = UInt64(rollover) << 16 | UInt64(sequence)
        guard crypt(rtp, ssrc: ssrc, index: index, base + header, length - header), authenticate(rtp, base, length, trailer: rollover) else {
            throw MediaError.srtp("SRTP protect failed")
        }
        for position in 0..<Self.tagLength { buffer[length + position] = digest[position] }
        return length + Self.tagLength
    }

    /// Unprotects the SRTP packet in `buffer[0..<length]` where it lies; returns the RTP
    /// length. Throws on a bad tag or a replay.
    public func unprotect(srtpIn buffer: UnsafeMutableRawBufferPointer, length: Int) throws(MediaError) -> Int {
        let bytes = UnsafeRawBufferPointer(buffer)
        let body = length - Self.tagLength
        guard let base = buffer.baseAddress, body >= 12, let header = Self.headerLength(bytes, body) else { throw MediaError.srtpRejected(-1) }
        let ssrc = Self.word(bytes, 8)
        let sequence = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
        guard mayTake(ssrc) else { throw MediaError.srtpRejected(-2) }
        var stream = streams[ssrc] ?? Stream()
        let rollover = Self.guessRollover(stream, sequence)
        let index = UInt64(rollover) << 16 | UInt64(sequence)
        guard authenticate(rtp, base, body, trailer: rollover), tagMatches(base + body) else { throw MediaError.srtpRejected(7) }
        guard Self.accept(index, in: &stream) else { throw MediaError.srtpRejected(9) }
        guard crypt(rtp, ssrc: ssrc, index: index, base + header, body - header) else { throw MediaError.srtp("SRTP unprotect failed") }
        Self.note(&stream, sequence: sequence, rollover: rollover)
        streams[ssrc] = stream
        return body
    }

    /// Whether a packet under `ssrc` may be read: a known SSRC, or room for one more (a new
    /// one takes its place only once a packet under it is authentic).
    private func mayTake(_ ssrc: UInt32) -> Bool {
        direction != .inbound || streams[ssrc] != nil || streams.count < maxStreams
    }

    /// The replay check: true (and marked) if `index` was not seen and is not too old.
    private static func accept(_ index: UInt64, in stream: inout Stream) -> Bool {
        if !stream.started || index > stream.top {
            let shift = stream.started ? index - stream.top : windowSize
            if shift >= windowSize {
                stream.seen = [UInt64](repeating: 0, count: 8)
            } else {
                shiftWindow(&stream.seen, by: Int(shift))
            }
            stream.top = index
            stream.seen[0] |= 1
            return true
        }
        let age = stream.top - index
        guard age < windowSize else { return false }
        let word = Int(age / 64)
        let bit = UInt64(1) << (age % 64)
        if stream.seen[word] & bit != 0 { return false }
        stream.seen[word] |= bit
        return true
    }

    /// Moves every bit `by` places toward older (higher) positions.
    private static func shiftWindow(_ words: inout [UInt64], by shift: Int) {
        let wordShift = shift / 64
        let bitShift = UInt64(shift % 64)
        for position in stride(from: words.count - 1, through: 0, by: -1) {
            let source = position - wordShift
            var value: UInt64 = source >= 0 ? words[source] << bitShift : 0
            if bitShift > 0, source - 1 >= 0 { value |= words[source - 1] >> (64 - bitShift) }
            words[position] = value
        }
    }

    // MARK: RTCP

    /// An RTCP packet made SRTCP (encrypted after the first 8 bytes, E flag and index, tag).
    public func protect(rtcp packet: [UInt8]) throws(MediaError) -> [UInt8] {
        guard packet.count >= 8 else { throw MediaError.srtpRejected(-1) }
        var out = packet + [UInt8](repeating: 0, count: 4 + Self.tagLength)
        let ssrc = UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7])
        var stream = streams[ssrc] ?? Stream()
        stream.controlIndex = (stream.controlIndex &+ 1) & 0x7FFF_FFFF
        streams[ssrc] = stream
        let index = stream.controlIndex
        let trailer = 0x8000_0000 | index
        let ok = out.withUnsafeMutableBytes { raw -> Bool in
            let base = raw.baseAddress!
            guard crypt(rtcp, ssrc: ssrc, index: UInt64(index), base + 8, packet.count - 8) else { return false }
            var big = trailer.bigEndian
            withUnsafeBytes(of: &big) { raw.baseAddress!.advanced(by: packet.count).copyMemory(from: $0.baseAddress!, byteCount: 4) }
            return authenticateControl(base, packet.count + 4)  // over the packet and E||index
        }
        guard ok else { throw MediaError.srtp("SRTCP protect failed") }
        for position in 0..<Self.tagLength { out[packet.count + 4 + position] = digest[position] }
        return out
    }

    /// HMAC-SHA1 of exactly `count` bytes, into `digest`.
    private func authenticateControl(_ data: UnsafeRawPointer, _ count: Int) -> Bool {
        var length = 0
        return EVP_MAC_init(rtcp.mac, nil, 0, nil) == 1 && EVP_MAC_update(rtcp.mac, data.assumingMemoryBound(to: UInt8.self), count) == 1
            && EVP_MAC_final(rtcp.mac, digest, &length, 20) == 1
    }

    /// The RTCP packet inside an SRTCP packet; throws on a bad tag or a replay.
    public func unprotect(srtcp packet: [UInt8]) throws(MediaError) -> [UInt8] {
        let body = packet.count - Self.tagLength - 4
        guard body >= 8 else { throw MediaError.srtpRejected(-1) }
        var out = packet
        let ssrc = UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7])
        let trailer = UInt32(packet[body]) << 24 | UInt32(packet[body + 1]) << 16 | UInt32(packet[body + 2]) << 8 | UInt32(packet[body + 3])
        let index = trailer & 0x7FFF_FFFF
        guard mayTake(ssrc) else { throw MediaError.srtpRejected(-2) }
        let authentic = out.withUnsafeBytes { raw in authenticateControl(raw.baseAddress!, body + 4) && tagMatches(raw.baseAddress! + body + 4) }
        guard authentic else { throw MediaError.srtpRejected(7) }
        var stream = streams[ssrc] ?? Stream()
        if stream.controlStarted {
            if index > stream.controlTop {
                let shift = index - stream.controlTop
                stream.controlSeen = shift >= 64 ? 1 : (stream.controlSeen << UInt64(shift)) | 1
                stream.controlTop = index
            } else {
                let age = stream.controlTop - index
                guard age < 64, stream.controlSeen & (UInt64(1) << UInt64(age)) == 0 else { throw MediaError.srtpRejected(9) }
                stream.controlSeen |= UInt64(1) << UInt64(age)
            }
        } else {
            stream.controlStarted = true
            stream.controlTop = index
            stream.controlSeen = 1
        }
        streams[ssrc] = stream
        if trailer & 0x8000_0000 != 0 {
            let decrypted = out.withUnsafeMutableBytes { crypt(rtcp, ssrc: ssrc, index: UInt64(index), $0.baseAddress! + 8, body - 8) }
            guard decrypted else { throw MediaError.srtp("SRTCP unprotect failed") }
        }
        return Array(out.prefix(body))
    }

    // MARK: Arrays

    public func protect(rtp packet: [UInt8]) throws(MediaError) -> [UInt8] {
        var local = packet + [UInt8](repeating: 0, count: Self.tagLength)
        let result = local.withUnsafeMutableBytes { raw -> Result<Int, MediaError> in
            do throws(MediaError) { return .success(try protect(rtpIn: raw, length: packet.count)) } catch { return .failure(error) }
        }
        return Array(local.prefix(try result.get()))
    }

    public func unprotect(srtp packet: [UInt8]) throws(MediaError) -> [UInt8] {
        var local = packet
        let result = local.withUnsafeMutableBytes { raw -> Result<Int, MediaError> in
            do throws(MediaError) { return .success(try unprotect(srtpIn: raw, length: packet.count)) } catch { return .failure(error) }
        }
        return Array(local.prefix(try result.get()))
    }
}
