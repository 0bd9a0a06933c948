import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Uploads in the store, on SQLite and PostgreSQL alike.
@Suite struct UploadStoreTests {
    @Test(arguments: StoreBackend.allCases) func uploadsTakeBytesInOrderAndExpireUnfinished(_ backend: StoreBackend) async throws {
        let place = try await backend.place()
        defer { backend.discard(place) }
        let store = try backend.open(place)
        try store.createUpload(Upload(id: "u1", owner: "huda", length: 600, mime: "video/mp4", metadata: "filetype dmlkZW8vbXA0", createdAt: 1, expiresAt: 50))
        try store.createUpload(Upload(id: "u2", owner: "huda", length: 5, mime: "image/png", createdAt: 1, expiresAt: 50))
        let bytes = (0..<600).map { UInt8($0 % 251) }
        #expect(try store.append(Array(bytes[0..<256]), to: "u1", of: "huda", at: 0, now: 2) == .appended(try #require(try store.upload("u1"))))
        #expect(try store.append([1], to: "u1", of: "huda", at: 0, now: 2) == .conflict(received: 256))
        #expect(try store.append([1], to: "u1", of: "omar", at: 256, now: 2) == .notFound)
        #expect(try store.append(Array(repeating: 0, count: 345), to: "u1", of: "huda", at: 256, now: 2) == .tooLong)
        guard case .appended(let done) = try store.append(Array(bytes[256...]), to: "u1", of: "huda", at: 256, now: 3) else {
            Issue.record("the rest was not taken")
            return
        }
        #expect(done.received == 600 && done.completedAt == 3 && done.metadata == "filetype dmlkZW8vbXA0")
        #expect(try store.bytes(of: "u1", in: 0..<600) == bytes && store.bytes(of: "u1", in: 250..<260) == Array(bytes[250..<260]))
        #expect(try store.unfinishedUploads(of: "huda") == 1)
        // Only the unfinished one goes when its time is up; nobody but its owner reads it until a message sends it.
        #expect(try store.expireUploads(now: 60) == 1)
        #expect(try store.upload("u2") == nil && store.upload("u1") != nil)
        #expect(try store.mayRead("u1", user: "huda") && !store.mayRead("u1", user: "omar"))
        try store.createGroup("g", title: "G", owner: "huda", members: ["omar"], access: .private, about: nil, now: 4)
        _ = try store.post(
            MessageDraft(type: "video", text: nil, payload: ["media": "u1"], fallback: "[Video]", clientMsgId: "v1"), in: "g", from: UserRef(id: "huda", name: "H"),
            now: 5)
        #expect(try store.mayRead("u1", user: "omar") && !store.mayRead("u1", user: "sara"))
        #expect(try store.deleteUpload("u1", of: "huda") == false)
    }
}
