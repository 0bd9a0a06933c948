import Foundation
import MajlisProtocol

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `PackSource` over HTTP: the server's catalogue and packs, which need no token.
public final class HTTPPackSource: PackSource {
    private let server: @Sendable () -> String
    private let session: URLSession

    /// `server`: the signaling URL (`ws://host:port/v1/signal`, `wss://...`) or the server's
    /// `http(s)://host:port`, asked at each call (a move to another node is followed).
    public init(server: @escaping @Sendable () -> String) {
        self.server = server
        let configuration = URLSessionConfiguration.ephemeral
        // A 50 MiB pack over a slow mobile link: generous, and the cache tries again next time.
        configuration.timeoutIntervalForRequest = 120
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    /// The packs of the server `signaling` is connected to.
    public convenience init(signaling: LiveSignalingClient) {
        self.init(server: { signaling.currentURL })
    }

    public func catalogue() async throws(MajlisError) -> Data {
        try await get("/v1/packs")
    }

    public func pack(_ sha256: String) async throws(MajlisError) -> Data {
        try await get("/v1/packs/\(sha256)")
    }

    private func get(_ path: String) async throws(MajlisError) -> Data {
        guard let url = URL(string: HTTPMediaTransfer.origin(server()) + path) else { throw MajlisError.misuse("no server URL to fetch packs from: \(server())") }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(from: url)
        } catch {
            throw MajlisError.unreachable("GET \(path): \(error.localizedDescription)")
        }
        guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else {
            throw HTTPMediaTransfer.refusal(HTTPMediaTransfer.Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, headers: [:], body: data))
        }
        return data
    }
}
