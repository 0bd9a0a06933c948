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

    public init(token: String, client: ClientInfo? = nil, resume: String? = nil) {
        self.token = token
        self.client = client
        self.resume = resume
    }
}
