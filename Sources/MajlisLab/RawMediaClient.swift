import Foundation
import MajlisProtocol
import MajlisTransport

/// A media client with nothing of the SDK in it: its own UDP socket and the SSRC and key a
/// snapshot handed out, speaking docs/protocol.md section 12 by hand. Tests use it to do what a
/// well-behaved client would not (send unseated, spoof an SSRC); benchmarks to make load.
/// One thread may send while another receives.
public final class RawMediaClient: @unchecked Sendable {
    // Audited: `outbound` is used by the sending thread only; `inbound`, `buffer` and the
    // receive calls by the receiving thread only; `sequence` by the sender.
    public let socket: UDPSocket
    public let ssrc: UInt32
    public let key: [UInt8]
    /// Where media goes: the server's media address (a benchmark may point it elsewhere before
    /// sending starts).
    public var server: UDPAddress
    public let outbound: SRTPSession
    /// Replaceable: a test may forget what it received, as if it had been lost.
    public var inbound: SRTPSession
    /// The last sequence number `send(_:)` used.
    public var sequence: UInt16 = 0
    private var buffer = [UInt8](repeating: 0, count: 2048)

    public init(settings: MediaSettings, receiveTimeoutMilliseconds: Int = 3_000) throws {
        ssrc = settings.ssrc
        key = settings.key
        server = settings.server
        socket = try UDPSocket(host: "127.0.0.1", port: 0, receiveTimeoutMilliseconds: receiveTimeoutMilliseconds)
        outbound = try SRTPSession(key: key, direction: .outbound)
        inbound = try SRTPSession(key: key, direction: .inbound)
    }

    /// Proves ownership of the address (answering the server's challenge for a new address);
    /// returns whether the server answered, signed, with this socket's port. A request that got
    /// no answer within the receive timeout is sent again (a binding is idempotent), up to
    /// `attempts` requests, and a datagram that is not an answer to this binding (media or a
    /// report still arriving from an earlier one) is passed over, up to 64 of them.
    public func bind(receivesRED: Bool = false, attempts: Int = 4) -> Bool {
        var binding = MediaBinding(ssrc: ssrc, key: key, receivesRED: receivesRED)
        var requests = 0
        var passedOver = 0
        var send = true
        while true {
            if send {
                guard requests < attempts else { return false }
                socket.send(binding.request(transactionId: MediaBinding.transactionId()), to: server)
                requests += 1
            }
            guard let (length, _) = socket.receive(into: &buffer) else {
                send = true
                continue
            }
            switch binding.receive(Array(buffer.prefix(length))) {
            case .bound(let port): return port == UInt16(socket.port)
            case .challenged: send = true  // again, now carrying the nonce
            case .ignored:
                passedOver += 1
                guard passedOver <= 64 else { return false }
                send = false
            }
        }
    }

    /// Sends `payload` as the next Opus packet, with a voice level of -30 dBov.
    public func send(_ payload: [UInt8]) throws {
        sequence &+= 1
        let packet = RTPPacket(payloadType: 111, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 960, ssrc: ssrc,
                               extensions: [RTPPacket.audioLevelExtension(id: 1, voice: true, level: 30)], payload: payload)
        socket.send(try outbound.protect(rtp: packet.serialized()), to: server)
    }

    /// Sends `payload` as sequence number `sequence` with payload type `payloadType`.
    public func send(_ payload: [UInt8], sequence: UInt16, payloadType: UInt8) throws {
        let packet = RTPPacket(payloadType: payloadType, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 960, ssrc: ssrc, payload: payload)
        socket.send(try outbound.protect(rtp: packet.serialized()), to: server)
    }

    /// The next RTP packet received, decrypted (RTCP is passed over); nil after the receive
    /// timeout, or at once when `wait` is false and nothing is queued.
    public func receive(wait: Bool = true) throws -> RTPPacket? {
        while let (length, _) = socket.receive(into: &buffer, wait: wait) {
            if (200...206).contains(buffer[1]) { continue }
            return try RTPPacket(parsing: inbound.unprotect(srtp: Array(buffer.prefix(length))))
        }
        return nil
    }

    /// The next datagram received, as it came; nil after the receive timeout.
    public func receiveRaw() -> [UInt8]? {
        guard let (length, _) = socket.receive(into: &buffer) else { return nil }
        return Array(buffer.prefix(length))
    }

    /// The next RTCP packets received (RTP passed over); nil after the receive timeout.
    public func receiveControl() throws -> [RTCPPacket]? {
        while let (length, _) = socket.receive(into: &buffer) {
            guard (200...206).contains(buffer[1]) else { continue }
            return try RTCPPacket.parseCompound(inbound.unprotect(srtcp: Array(buffer.prefix(length))))
        }
        return nil
    }

    public func sendControl(_ packets: [RTCPPacket]) throws {
        socket.send(try outbound.protect(rtcp: RTCPPacket.serializeCompound(packets)), to: server)
    }
}
