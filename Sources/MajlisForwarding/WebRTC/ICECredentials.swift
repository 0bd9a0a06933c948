import MajlisTransport
/// An ICE username fragment and password (RFC 8445 section 5.3; RFC 8839 `a=ice-ufrag`,
/// `a=ice-pwd`).
public struct ICECredentials: Sendable, Equatable, Hashable {
    public var ufrag: String
    public var password: String

    public init(ufrag: String, password: String) {
        self.ufrag = ufrag
        self.password = password
    }

    /// Fresh random credentials (48 and 144 bits of randomness).
    public static func random() -> ICECredentials {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        func text(_ count: Int) -> String { String(HMACSHA256.randomBytes(count).map { alphabet[Int($0) % alphabet.count] }) }
        return ICECredentials(ufrag: text(8), password: text(24))
    }
}
