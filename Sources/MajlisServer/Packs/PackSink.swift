import MajlisPacks
import MajlisTransport
import Synchronization

/// The body of one `POST /v1/packs`: the archive, kept in memory as it arrives (up to
/// `ResourcePack.maxBytes`; past that the rest is thrown away, and the upload answered 413), then
/// checked and stored as a whole.
final class PackSink: HTTPBodySink {
    private let bytes = Mutex<(kept: [UInt8], tooLarge: Bool)>(([], false))
    private let packs: PackRequests

    init(packs: PackRequests) {
        self.packs = packs
    }

    func receive(_ more: UnsafeRawBufferPointer) {
        bytes.withLock { body in
            guard !body.tooLarge else { return }
            if body.kept.count + more.count > ResourcePack.maxBytes {
                body.tooLarge = true
                body.kept = []
            } else {
                body.kept.append(contentsOf: more)
            }
        }
    }

    func finish(_ exchange: HTTPExchange) {
        let (kept, tooLarge) = bytes.withLock { $0 }
        if tooLarge { return exchange.respond(PackRequests.tooLarge) }
        packs.publish(kept, answering: exchange)
    }

    func cut() {}
}
