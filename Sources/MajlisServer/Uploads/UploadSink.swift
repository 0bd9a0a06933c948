import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization

/// The body of one `PATCH /v1/uploads/{id}`, kept as it arrives: in chunks of
/// `UploadRequests.chunkBytes`, each stored in order on the uploads' queue, and whatever is
/// left when the connection is cut, so the client resumes from all that arrived. Answered
/// once every chunk is stored: 204 with the new `Upload-Offset`, or why not.
final class UploadSink: HTTPBodySink {
    private struct State {
        var pending: [UInt8] = []
        /// Where the next chunk goes.
        var offset: Int64
        /// Why the rest is thrown away (an answer), once a chunk was refused.
        var failure: HTTPResponse?
        /// A newer PATCH of the same upload took over: the rest is thrown away.
        var superseded = false
        /// What the store last said the upload holds.
        var stored: Int64
    }

    let id: String
    let owner: String
    private let uploads: UploadRequests
    private let state: Mutex<State>

    init(id: String, owner: String, offset: Int64, uploads: UploadRequests) {
        self.id = id
        self.owner = owner
        self.uploads = uploads
        state = Mutex(State(offset: offset, stored: offset))
    }

    func receive(_ bytes: UnsafeRawBufferPointer) {
        let full = state.withLock { state -> Bool in
            guard state.failure == nil, !state.superseded else { return false }
            state.pending.append(contentsOf: bytes)
            return state.pending.count >= UploadRequests.chunkBytes
        }
        if full { flush() }
    }

    func finish(_ exchange: HTTPExchange) {
        flush()
        uploads.writes.async { [self] in
            uploads.ended(self)
            let (failure, stored) = state.withLock { ($0.failure, $0.stored) }
            exchange.respond(failure ?? UploadRequests.answer(204, ["Upload-Offset": String(stored)]))
        }
    }

    func cut() {
        flush()
        uploads.writes.async { [self] in uploads.ended(self) }
    }

    /// A newer PATCH of this upload began: what this one holds is stored, the rest not taken.
    func supersede() {
        flush()
        state.withLock { $0.superseded = true }
    }

    /// Hands what is pending to the uploads' queue, to be stored after what went before.
    private func flush() {
        let chunk = state.withLock { state -> (bytes: [UInt8], at: Int64)? in
            guard !state.pending.isEmpty, state.failure == nil else { return nil }
            defer {
                state.offset += Int64(state.pending.count)
                state.pending = []
            }
            return (state.pending, state.offset)
        }
        guard let chunk else { return }
        uploads.writes.async { [self] in
            guard state.withLock({ $0.failure == nil }) else { return }
            let outcome: HTTPResponse?
            do {
                switch try uploads.context.store.append(chunk.bytes, to: id, of: owner, at: chunk.at, now: uploads.context.now()) {
                case .appended(let upload):
                    state.withLock { $0.stored = upload.received }
                    outcome = nil
                case .conflict(let received):
                    outcome = UploadRequests.failure(409, .conflict, "the upload holds \(received) bytes: send from Upload-Offset \(received)", ["Upload-Offset": String(received)])
                case .tooLong:
                    outcome = UploadRequests.failure(413, .tooLarge, "the bytes run past the upload's Upload-Length")
                case .notFound:
                    outcome = UploadRequests.failure(404, .badRequest, "no upload \(id) of yours (it may have expired)")
                }
            } catch {
                uploads.context.logger.error("upload \(id): store failed: \(error)")
                outcome = UploadRequests.failure(503, .internal, "the store could not keep the bytes; ask for the offset (HEAD) and send again", ["Retry-After": "1"])
            }
            if let outcome { state.withLock { if $0.failure == nil { $0.failure = outcome } } }
        }
    }
}
