import MajlisTransport
/// An SDP text (RFC 8866), parsed into session lines and media sections; attributes are kept
/// as name and value (`a=rtpmap:111 opus/48000/2` is `rtpmap`, `111 opus/48000/2`).
public struct SessionDescription: Sendable, Equatable {
    public struct Attribute: Sendable, Equatable {
        public var name: String
        public var value: String?
    }

    public struct Media: Sendable, Equatable {
        /// `audio`, `video`, `application`...
        public var kind: String
        public var port: Int
        public var proto: String
        /// Payload types (or formats) in the m= line, in order.
        public var formats: [String]
        public var attributes: [Attribute]

        public func values(_ name: String) -> [String] { attributes.filter { $0.name == name }.map { $0.value ?? "" } }
        public func value(_ name: String) -> String? { attributes.first { $0.name == name }.map { $0.value ?? "" } }
        public func has(_ name: String) -> Bool { attributes.contains { $0.name == name } }
    }

    public var attributes: [Attribute] = []
    public var media: [Media] = []

    public func value(_ name: String) -> String? { attributes.first { $0.name == name }.map { $0.value ?? "" } }

    /// The largest SDP accepted (Chrome's offer with 30 audio sections is about 30 kB).
    public static let maxLength = 65_536
    /// Formats one m= line may list: RTP payload types are 0 to 127 (Chrome's audio section
    /// lists about 15).
    public static let maxFormats = 128
    /// Attributes one section (or the session) may carry: Chrome's audio section has about 40
    /// (rtpmap, fmtp, rtcp-fb, extmap, ssrc lines).
    public static let maxAttributes = 256

    public init(parsing text: String) throws(SDPError) {
        guard text.utf8.count <= Self.maxLength else { throw SDPError("the SDP is longer than \(Self.maxLength) bytes") }
        var sawVersion = false
        for raw in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let line = raw.hasSuffix("\r") ? raw.dropLast() : Substring(raw)
            guard line.count >= 2, line.dropFirst().first == "=", let type = line.first else {
                throw SDPError("not an SDP line: \(line.prefix(40))")
            }
            let content = line.dropFirst(2)
            switch type {
            case "v":
                guard content == "0" else { throw SDPError("unknown SDP version \(content.prefix(10))") }
                sawVersion = true
            case "m":
                let fields = content.split(separator: " ")
                guard fields.count >= 3, let port = Int(fields[1].split(separator: "/")[0]), (0...65_535).contains(port) else {
                    throw SDPError("bad m= line: \(line.prefix(60))")
                }
                guard fields.count - 3 <= Self.maxFormats else { throw SDPError("an m= line lists \(fields.count - 3) formats; at most \(Self.maxFormats)") }
                media.append(Media(kind: String(fields[0]), port: port, proto: String(fields[2]), formats: fields.dropFirst(3).map(String.init), attributes: []))
            case "a":
                let attribute: Attribute
                if let colon = content.firstIndex(of: ":") {
                    attribute = Attribute(name: String(content[..<colon]), value: String(content[content.index(after: colon)...]))
                } else {
                    attribute = Attribute(name: String(content), value: nil)
                }
                let count = media.last?.attributes.count ?? attributes.count
                guard count < Self.maxAttributes else { throw SDPError("a section has more than \(Self.maxAttributes) attributes") }
                if media.isEmpty { attributes.append(attribute) } else { media[media.count - 1].attributes.append(attribute) }
            default:
                break  // o=, s=, t=, c=, b=...: nothing Majlis needs
            }
        }
        guard sawVersion else { throw SDPError("no v=0 line: not an SDP") }
    }
}

/// Why an SDP offer cannot be answered.
public struct SDPError: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
