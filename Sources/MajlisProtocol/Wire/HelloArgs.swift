/// The args of `hello`.
public struct HelloArgs: Sendable, Equatable, Codable {
    /// Describes the client software.
    public struct ClientInfo: Sendable, Equatable, Codable {
        public var sdk: String?
        public var version: String?
        public var platform: String?
        public init(sdk: String? = nil, version: String? = nil, platform: String? = nil) {
            self.sdk = sdk
            self.version = version
            self.platform = platform
        }
    }

    public var token: String
    public var client: ClientInfo?
    /// A previous session id to resume.
    public var resume: String?
    /// The client's own name for the device it runs on (an install's id): a user's sessions on
    /// different devices live side by side (each gets the user's messages); a newer session on
    /// the same device, or with no device on either, replaces the older.
    public var device: String?
    /// The node of a cluster that opened this session to relay a client's ops on its rooms here
    /// (such a session's ops are not relayed again).
    public var via: String?
    /// With `via`: that node's signed statement of the address the client connected to it from
    /// (the session is counted against that address).
    public var relay: String?

    public init(token: String, client: ClientInfo? = nil, resume: String? = nil, device: String? = nil, via: String? = nil, relay: String? = nil) {
        self.token = token
        self.client = client
        self.resume = resume
        self.device = device
        self.via = via
        self.relay = relay
    }
}
