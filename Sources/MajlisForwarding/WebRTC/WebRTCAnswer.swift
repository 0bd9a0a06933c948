import MajlisTransport
/// The server's SDP answer to a `WebRTCOffer` (ICE-lite, DTLS server, BUNDLE, rtcp-mux): the
/// peer's first section it sends on carries its microphone to the server; each following
/// section it receives on carries one seat's speaker, seat 0 first; sections beyond the seat
/// count are inactive and anything that is not usable audio is refused (port 0).
public struct WebRTCAnswer: Sendable, Equatable {
    /// Which answered section carries which seat.
    public struct Track: Sendable, Equatable, Encodable {
        public var mid: String
        public var seat: Int
        public var ssrc: UInt32
    }

    public var sdp: String
    public var tracks: [Track]
    /// The mid of the section the peer's microphone goes up on, if any.
    public var uplink: String?
    public var parameters: WebRTCParameters

    /// Answers `offer` for a room of `seats` seats; the candidate is `host:port` (IPv4).
    public init(offer: WebRTCOffer, seats: Int, ice: ICECredentials, fingerprint: String, host: String, port: Int, version: Int = 1) {
        let first = offer.sections.first(where: \.usable)!  // an offer has one (WebRTCOffer checks)
        // Bundled sections share payload types: those that use another Opus number are refused.
        let usable = offer.sections.filter { $0.usable && $0.opusPayloadType == first.opusPayloadType }
        let uplink = usable.first(where: \.peerSends)
        var tracks: [Track] = []
        for section in usable where section.peerReceives && section.mid != uplink?.mid && tracks.count < seats {
            tracks.append(Track(mid: section.mid, seat: tracks.count, ssrc: WebRTCParameters.trackSSRC(seat: tracks.count)))
        }
        let red = usable.allSatisfy { $0.redPayloadType == first.redPayloadType } ? first.redPayloadType : nil
        let level = usable.allSatisfy { $0.audioLevelExtension == first.audioLevelExtension } ? first.audioLevelExtension : nil
        parameters = WebRTCParameters(
            opusPayloadType: first.opusPayloadType, redPayloadType: red, audioLevelExtension: level, sends: uplink != nil,
            trackSSRCs: (0..<seats).map(WebRTCParameters.trackSSRC))
        self.tracks = tracks
        self.uplink = uplink?.mid
        let accepted = usable.map(\.mid)
        let session = ice.ufrag.utf8.reduce(UInt64(14_695_981_039_346_656_037)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 } >> 2
        var lines = [
            "v=0", "o=majlis \(session) \(version) IN IP4 \(host)", "s=-", "t=0 0", "a=ice-lite",
            "a=group:BUNDLE \(accepted.joined(separator: " "))", "a=msid-semantic: WMS majlis",
        ]
        for section in offer.sections {
            guard accepted.contains(section.mid) else {
                lines += ["m=\(section.kind) 0 \(section.proto) \(section.formats.joined(separator: " "))", "c=IN IP4 0.0.0.0", "a=mid:\(section.mid)", "a=inactive"]
                continue
            }
            let formats = [section.opusPayloadType] + (red.map { [$0] } ?? [])
            lines += [
                "m=audio \(port) UDP/TLS/RTP/SAVPF \(formats.map(String.init).joined(separator: " "))", "c=IN IP4 \(host)",
                "a=candidate:1 1 udp 2130706431 \(host) \(port) typ host", "a=end-of-candidates",
                "a=ice-ufrag:\(ice.ufrag)", "a=ice-pwd:\(ice.password)", "a=fingerprint:sha-256 \(fingerprint)", "a=setup:passive",
                "a=mid:\(section.mid)",
            ]
            if let level { lines.append("a=extmap:\(level) \(WebRTCOffer.audioLevelURI)") }
            let track = tracks.first { $0.mid == section.mid }
            lines.append(section.mid == uplink?.mid ? "a=recvonly" : track != nil ? "a=sendonly" : "a=inactive")
            lines += ["a=rtcp-mux", "a=rtpmap:\(section.opusPayloadType) opus/48000/2", "a=fmtp:\(section.opusPayloadType) minptime=10;useinbandfec=1"]
            if let red { lines += ["a=rtpmap:\(red) red/48000/2", "a=fmtp:\(red) \(section.opusPayloadType)/\(section.opusPayloadType)"] }
            if let track {
                lines += ["a=msid:majlis seat\(track.seat)", "a=ssrc:\(track.ssrc) cname:majlis", "a=ssrc:\(track.ssrc) msid:majlis seat\(track.seat)"]
            }
        }
        sdp = lines.joined(separator: "\r\n") + "\r\n"
    }
}
