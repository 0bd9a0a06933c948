import MajlisProtocol
import MajlisTransport
/// What a browser's SDP offer asks for, as Majlis reads it: the ICE credentials, the DTLS
/// fingerprint and role, and per audio section its direction and the payload types and header
/// extension ids the peer chose.
public struct WebRTCOffer: Sendable, Equatable {
    public struct Section: Sendable, Equatable {
        public var mid: String
        /// Whether the section carries audio Majlis can take part in (Opus over UDP/TLS/RTP/SAVPF
        /// with rtcp-mux); others are refused in the answer.
        public var usable: Bool
        /// The peer sends (sendrecv, sendonly) and receives (sendrecv, recvonly) here.
        public var peerSends: Bool
        public var peerReceives: Bool
        public var opusPayloadType: UInt8
        /// RED (RFC 2198) over that Opus, if offered.
        public var redPayloadType: UInt8?
        /// `urn:ietf:params:rtp-hdrext:ssrc-audio-level`, if offered.
        public var audioLevelExtension: UInt8?
        /// The raw m= section's kind, port and proto, for a refusal that mirrors it.
        public var kind: String
        public var proto: String
        public var formats: [String]
    }

    public let iceUfrag: String
    public let icePassword: String
    /// The SHA-256 fingerprint of the peer's certificate.
    public let fingerprint: [UInt8]
    /// Every m= section, in order (at least one usable).
    public let sections: [Section]

    static let audioLevelURI = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"

    public init(sdp text: String) throws(SDPError) {
        let sdp = try SessionDescription(parsing: text)
        guard !sdp.media.isEmpty else { throw SDPError("the offer has no media sections") }
        func shared(_ name: String) -> String? { sdp.media.lazy.compactMap { $0.value(name) }.first ?? sdp.value(name) }
        guard let ufrag = shared("ice-ufrag"), let password = shared("ice-pwd"), (4...256).contains(ufrag.count), (22...256).contains(password.count),
            ufrag.allSatisfy(Self.isICEChar), password.allSatisfy(Self.isICEChar)
        else { throw SDPError("the offer has no valid a=ice-ufrag and a=ice-pwd (RFC 8839)") }
        guard let fingerprint = shared("fingerprint") else { throw SDPError("the offer has no a=fingerprint") }
        let parts = fingerprint.split(separator: " ")
        guard parts.count == 2, parts[0].lowercased() == "sha-256" else { throw SDPError("only sha-256 fingerprints are accepted, not \(fingerprint.prefix(20))") }
        let groups = parts[1].split(separator: ":", omittingEmptySubsequences: false)
        let bytes = groups.compactMap { $0.count == 2 ? UInt8($0, radix: 16) : nil }
        guard bytes.count == 32, groups.count == 32 else { throw SDPError("the sha-256 fingerprint is not 32 hex bytes") }
        let setup = shared("setup") ?? "actpass"
        guard setup == "actpass" || setup == "active" else {
            throw SDPError("a=setup:\(setup.prefix(20)) is not supported: the server is the DTLS server, so offer actpass or active")
        }
        if sdp.media.count > 1 {
            let bundle = sdp.value("group").map { $0.split(separator: " ") } ?? []
            guard bundle.first == "BUNDLE" else { throw SDPError("several media sections need a=group:BUNDLE: Majlis takes all media on one transport") }
        }
        var mids = Set<String>()
        var sections: [Section] = []
        for (index, media) in sdp.media.enumerated() {
            let mid = media.value("mid") ?? String(index)
            guard mids.insert(mid).inserted else { throw SDPError("two media sections have mid \(mid.prefix(20))") }
            sections.append(Self.section(media, mid: mid))
        }
        guard sections.contains(where: \.usable) else { throw SDPError("the offer has no Opus audio over UDP/TLS/RTP/SAVPF with rtcp-mux") }
        iceUfrag = ufrag
        icePassword = password
        self.fingerprint = bytes
        self.sections = sections
    }

    /// Reads a client's offer for `op` (`webrtc.offer`, `echo.start`), which may hold at most
    /// `most` media sections (`why` says what they are for): more is refused before any parsing,
    /// so that an offer's reading cost is bounded by what the op can use. Refusals are
    /// `bad_request` naming the op.
    public init(admitting sdp: String, op: String, mostSections most: Int, why: String) throws(ProtocolError) {
        let sections = sdp.utf8.split(separator: UInt8(ascii: "\n")).count { $0.starts(with: "m=".utf8) }
        guard sections <= most else { throw ProtocolError(.badRequest, "\(op): \(sections) media sections; \(why)") }
        do {
            try self.init(sdp: sdp)
        } catch {
            throw ProtocolError(.badRequest, "\(op): \(error)")
        }
    }

    static func isICEChar(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || character == "+" || character == "/")
    }

    /// Reads one section in a single pass over its attributes (indexed by name, and `fmtp` by
    /// payload type), so that the work grows with the section's size, not formats times
    /// attributes.
    private static func section(_ media: SessionDescription.Media, mid: String) -> Section {
        var byName: [String: [String]] = [:]
        for attribute in media.attributes { byName[attribute.name, default: []].append(attribute.value ?? "") }
        var rtpmaps: [UInt8: String] = [:]
        for value in byName["rtpmap"] ?? [] {
            let parts = value.split(separator: " ", maxSplits: 1)
            if parts.count == 2, let type = UInt8(parts[0]), type < 128 { rtpmaps[type] = parts[1].lowercased() }
        }
        var fmtps: [UInt8: String] = [:]
        for value in byName["fmtp"] ?? [] {
            if let type = value.split(separator: " ", maxSplits: 1).first.flatMap({ UInt8($0) }), fmtps[type] == nil { fmtps[type] = value }
        }
        let offered = media.formats.compactMap(UInt8.init)
        let opus = offered.first { rtpmaps[$0] == "opus/48000/2" }
        var red: UInt8?
        if let opus {
            for type in offered where rtpmaps[type] == "red/48000/2" {
                let blocks = fmtps[type]?.split(separator: " ").last?.split(separator: "/").compactMap { UInt8($0) } ?? []
                if !blocks.isEmpty, blocks.allSatisfy({ $0 == opus }) { red = type }
            }
        }
        var audioLevel: UInt8?
        for value in byName["extmap"] ?? [] {
            let parts = value.split(separator: " ")
            if parts.count >= 2, parts[1] == audioLevelURI, let id = UInt8(parts[0].split(separator: "/")[0]), (1...14).contains(id) { audioLevel = id }
        }
        let direction = ["sendrecv", "sendonly", "recvonly", "inactive"].first { byName[$0] != nil } ?? "sendrecv"
        let usable = media.kind == "audio" && media.port != 0 && media.proto == "UDP/TLS/RTP/SAVPF" && opus != nil && byName["rtcp-mux"] != nil
        return Section(
            mid: mid, usable: usable, peerSends: direction == "sendrecv" || direction == "sendonly",
            peerReceives: direction == "sendrecv" || direction == "recvonly", opusPayloadType: opus ?? 0, redPayloadType: red,
            audioLevelExtension: audioLevel, kind: media.kind, proto: media.proto, formats: media.formats)
    }
}
