import Foundation
import MajlisProtocol
import Synchronization

/// A `MediaTransfer` that keeps uploads in memory, with the server's rules (an offset that is
/// not where the upload stands is a conflict; bytes past its length are refused; an unfinished
/// upload cannot be read). `failAfter` makes the next appends fail, as a cut network does.
public final class MemoryMediaTransfer: MediaTransfer {
    struct Upload {
        var type: String
        var length: Int64
        var bytes = Data()
    }

    private struct State {
        var uploads: [String: Upload] = [:]
        var next = 0
        /// Appends that may still go through before every one fails (nil: no limit).
        var appendsLeft: Int?
        var appends = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// The appends made so far (failed ones too).
    public var appends: Int { state.withLock { $0.appends } }

    /// After `count` more appends, every append fails (nil: none fails).
    public func failAfter(_ count: Int?) { state.withLock { $0.appendsLeft = count } }

    /// Forgets `upload`, as the server does when an unfinished one expires.
    public func expire(_ upload: String) { _ = state.withLock { $0.uploads.removeValue(forKey: upload) } }

    public func create(length: Int64, type: String, filename: String?) async throws(MajlisError) -> String {
        guard length > 0 else { throw MajlisError.server(ProtocolError(.badRequest, "Upload-Length must be 1 or more")) }
        return state.withLock { state in
            state.next += 1
            let id = "up-\(state.next)"
            state.uploads[id] = Upload(type: type, length: length)
            return id
        }
    }

    public func offset(of upload: String) async throws(MajlisError) -> Int64? {
        state.withLock { $0.uploads[upload].map { Int64($0.bytes.count) } }
    }

    public func append(_ bytes: Data, to upload: String, at offset: Int64) async throws(MajlisError) -> Int64 {
        let result: Result<Int64, MajlisError> = state.withLock { state in
            state.appends += 1
            if let left = state.appendsLeft {
                guard left > 0 else { return .failure(.unreachable("the network is cut")) }
                state.appendsLeft = left - 1
            }
            guard var stored = state.uploads[upload] else { return .failure(.server(ProtocolError(.badRequest, "no upload \(upload)"))) }
            guard offset == Int64(stored.bytes.count) else {
                return .failure(.server(ProtocolError(.conflict, "the upload stands at \(stored.bytes.count)")))
            }
            guard offset + Int64(bytes.count) <= stored.length else { return .failure(.server(ProtocolError(.tooLarge, "past Upload-Length"))) }
            stored.bytes.append(bytes)
            state.uploads[upload] = stored
            return .success(Int64(stored.bytes.count))
        }
        return try result.get()
    }

    public func download(_ media: String, range: Range<Int64>?) async throws(MajlisError) -> Data {
        guard let stored = state.withLock({ $0.uploads[media] }), Int64(stored.bytes.count) == stored.length else {
            throw MajlisError.server(ProtocolError(.badRequest, "no media \(media)"))
        }
        guard let range else { return stored.bytes }
        guard range.lowerBound >= 0, range.upperBound <= stored.length else { throw MajlisError.server(ProtocolError(.badRequest, "range outside the media")) }
        return stored.bytes.subdata(in: Int(range.lowerBound)..<Int(range.upperBound))
    }
}
