import MajlisProtocol

extension SignalingClientCore {
    /// How the client behaves; the defaults suit phones on weak networks.
    public struct Options: Sendable {
        /// Milliseconds to wait for one answer before trying again.
        public var requestTimeout: Int64 = 5_000
        /// Tries per request (first send included).
        public var maxTries = 3
        /// Reconnect delays in milliseconds; the last one repeats.
        public var backoff: [Int64] = [250, 500, 1_000, 2_000, 4_000, 8_000]
        /// Give up reconnecting after this many milliseconds.
        public var reconnectFor: Int64 = 120_000
        public var client = HelloArgs.ClientInfo(sdk: "majlis-swift", version: "0.1.0", platform: SignalingClientCore.platform)
        /// A PEM file holding a server certificate to trust over `wss` besides those the system's
        /// certificate authorities vouch for (a development server's self-signed one). Any other
        /// certificate, or one for another host, fails the connection before the token is sent.
        public var trustedCertificate: String?
        /// The app's own id for this device or install (1 to 64 of `A-Z a-z 0-9 _ . @ -`, the
        /// same across launches): the user's connections on other devices then stay open beside
        /// this one, and each gets the user's messages. Nil: any newer connection of the user
        /// replaces this one.
        public var device: String?
        public init() {}
    }

    public static let platform: String = {
        #if os(Linux)
        return "linux"
        #elseif os(iOS)
        return "ios"
        #elseif os(macOS)
        return "macos"
        #else
        return "other"
        #endif
    }()
}
