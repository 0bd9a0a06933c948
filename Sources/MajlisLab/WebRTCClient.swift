import Foundation
import MajlisForwarding
import MajlisProtocol
import MajlisTransport

/// A WebRTC endpoint in Swift that behaves as a browser does toward Majlis: it offers one
/// section for its microphone and one receive-only section per seat (BUNDLE, rtcp-mux,
/// `a=setup:actpass`), nominates the server's candidate with an ICE check, is the DTLS client,
/// and then speaks SRTP with the exporter's keys. Tests use it beside headless Chromium (it can
/// choose other payload type and extension numbers than Chrome's, or lie about its
/// fingerprint); benchmarks use it as browser load. One thread may send while another receives.
public final class WebRTCClient: @unchecked Sendable {
    // Audited: `outbound` and `sequence` belong to the sending thread, `inbound` and `buffer`
    // to the receiving one (`check` too); `connect` runs before either.
    public let socket: UDPSocket
    public let identity: DTLSIdentity
    public let ice = ICECredentials.random()
    public let ssrc = UInt32.random(in: 0x1000...0x0FFF_FFFF)
    public var opusPayloadType: UInt8 = 111
    public var redPayloadType: UInt8? = 63
    public var audioLevelExtension: UInt8? = 1
    public private(set) var server: UDPAddress?
    /// The server's ICE credentials, from its answer.
    private var remote: ICECredentials?
    private var outbound: SRTPTransform?
    private var inbound: SRTPTransform?
    private var sequence = UInt16.random(in: 0...UInt16.max)
    private var buffer = [UInt8](repeating: 0, count: 2048)

    public init(receiveTimeoutMilliseconds: Int = 3_000) throws {
        socket = try UDPSocket(host: "127.0.0.1", port: 0, receiveTimeoutMilliseconds: receiveTimeoutMilliseconds)
        identity = try DTLSIdentity(pem: DTLSIdentity.generatePEM())
    }

    /// An offer as a browser's: a microphone section (mid 0, sendrecv), then `seats` receive-only
    /// sections; `fingerprint` may be given to lie about the certificate.
    public func offer(seats: Int, fingerprint: [UInt8]? = nil) -> String {
        let mids = (0...seats).map(String.init)
        var lines = ["v=0", "o=- 1 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE \(mids.joined(separator: " "))", "a=extmap-allow-mixed"]
        for mid in mids {
            let formats = [opusPayloadType] + (redPayloadType.map { [$0] } ?? []) + [0]
            lines += [
                "m=audio 9 UDP/TLS/RTP/SAVPF \(formats.map(String.init).joined(separator: " "))", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0",
                "a=ice-ufrag:\(ice.ufrag)", "a=ice-pwd:\(ice.password)", "a=ice-options:trickle",
                "a=fingerprint:sha-256 \(DTLSIdentity.text(fingerprint ?? identity.fingerprint))", "a=setup:actpass", "a=mid:\(mid)",
            ]
            if let audioLevelExtension { lines.append("a=extmap:\(audioLevelExtension) urn:ietf:params:rtp-hdrext:ssrc-audio-level") }
            lines += [
                "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time", mid == "0" ? "a=sendrecv" : "a=recvonly", "a=rtcp-mux",
                "a=rtpmap:\(opusPayloadType) opus/48000/2", "a=fmtp:\(opusPayloadType) minptime=10;useinbandfec=1",
                "a=rtcp-fb:\(opusPayloadType) transport-cc",
            ]
            if let redPayloadType { lines += ["a=rtpmap:\(redPayloadType) red/48000/2", "a=fmtp:\(redPayloadType) \(opusPayloadType)/\(opusPayloadType)"] }
            lines.append("a=rtpmap:0 PCMU/8000")
            if mid == "0" { lines.append("a=ssrc:\(ssrc) cname:lab") }
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads the answer, nominates the server's candidate and runs the DTLS handshake; throws if
    /// any step gets no good answer.
    public func connect(answer sdp: String) throws {
        let answer = try SessionDescription(parsing: sdp)
        guard let media = answer.media.first, let ufrag = media.value("ice-ufrag"), let password = media.value("ice-pwd"),
            let candidate = media.value("candidate")?.split(separator: " "), candidate.count >= 6,
            let server = UDPAddress(host: String(candidate[4]), port: Int(candidate[5]) ?? 0),
            let fingerprint = media.value("fingerprint")?.split(separator: " ").last
        else { throw Failure(description: "the answer lacks ICE credentials, a candidate or a fingerprint") }
        self.server = server
        remote = ICECredentials(ufrag: ufrag, password: password)
        guard check(nominate: true) else { throw Failure(description: "no answer to the ICE check") }
        let serverFingerprint = fingerprint.split(separator: ":").compactMap { UInt8($0, radix: 16) }
        let dtls = try DTLSAssociation(identity: identity, peerFingerprint: serverFingerprint, role: .client)
        for datagram in dtls.start() { socket.send(datagram, to: server) }
        var silences = 0
        while dtls.state == .handshaking {
            guard let (length, _) = socket.receive(into: &buffer) else {
                silences += 1
                guard silences < 5 else { throw Failure(description: "the DTLS handshake got no answer") }
                for datagram in dtls.retransmitIfDue() { socket.send(datagram, to: server) }
                continue
            }
            if answerServerCheck(length: length) { continue }
            guard MediaPacketKind(buffer.prefix(length)) == .dtls else { continue }
            for datagram in dtls.receive(Array(buffer.prefix(length))) { socket.send(datagram, to: server) }
        }
        guard case .connected(let inboundKey, let outboundKey) = dtls.state else { throw Failure(description: "DTLS: \(dtls.state)") }
        inbound = try SRTPTransform(key: inboundKey, direction: .inbound)
        outbound = try SRTPTransform(key: outboundKey, direction: .outbound)
    }

    /// Sends ICE checks to the server until one is answered (at most five, each given a receive
    /// timeout or a hundred other datagrams): the nomination, or a consent check (RFC 7675) as a
    /// browser sends every few seconds. Whether one was answered. Media that arrives meanwhile
    /// is passed over.
    @discardableResult
    public func check(nominate: Bool = false) -> Bool {
        guard let remote, let server else { return false }
        for _ in 0..<5 {
            socket.send(ICELite.request(transactionId: MediaBinding.transactionId(), remote: remote, localUfrag: ice.ufrag, nominate: nominate), to: server)
            for _ in 0..<100 {
                guard let (length, _) = socket.receive(into: &buffer) else { break }
                if answerServerCheck(length: length) { continue }
                if ICELite.isSuccess(Array(buffer.prefix(length)), remote: remote) { return true }
            }
        }
        return false
    }

    /// Answers the server's own check (sent to prove this address can receive before media
    /// comes here) if `buffer[0..<length]` is one, as a browser's ICE agent does; whether it was.
    private func answerServerCheck(length: Int) -> Bool {
        guard let server, MediaPacketKind(buffer.prefix(length)) == .stun else { return false }
        let packet = Array(buffer.prefix(length))
        guard let request = try? STUNMessage(parsing: packet), let check = ICELite.check(packet, request: request, local: ice) else { return false }
        socket.send(ICELite.success(transactionId: check.transactionId, from: server, local: ice), to: server)
        return true
    }

    /// Sends `payload` as the next Opus packet (with a voice level of -30 dBov when the audio
    /// level extension was negotiated).
    public func send(_ payload: [UInt8]) throws {
        guard let outbound, let server else { throw Failure(description: "not connected") }
        sequence &+= 1
        let extensions = audioLevelExtension.map { [RTPPacket.audioLevelExtension(id: $0, voice: true, level: 30)] } ?? []
        let packet = RTPPacket(payloadType: opusPayloadType, sequenceNumber: sequence, timestamp: UInt32(sequence) &* 960, ssrc: ssrc, extensions: extensions, payload: payload)
        socket.send(try outbound.protect(rtp: packet.serialized()), to: server)
    }

    /// The next RTP packet received, decrypted (RTCP and STUN passed over); nil after the
    /// receive timeout.
    public func receive(wait: Bool = true) throws -> RTPPacket? {
        guard let inbound else { throw Failure(description: "not connected") }
        while let (length, _) = socket.receive(into: &buffer, wait: wait) {
            if answerServerCheck(length: length) { continue }
            guard MediaPacketKind(buffer.prefix(length)) == .rtp else { continue }
            return try RTPPacket(parsing: inbound.unprotect(srtp: Array(buffer.prefix(length))))
        }
        return nil
    }
}
