import Foundation
import MajlisKit
import MajlisServer
import MajlisTestSupport
import Synchronization
import Testing

/// Image, voice and video messages through the SDK: the file is uploaded in pieces, a cut or a
/// killed app goes on from where the server stands (a new upload when the server no longer keeps
/// it), and the message naming it posts once. On the in-memory twin, then on the real server.
@Suite struct MediaMessageTests {
    static func file(_ bytes: Int, named name: String) throws -> (path: String, data: Data) {
        let data = randomBytes(bytes)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-media-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(name).path
        try data.write(to: URL(fileURLWithPath: path))
        return (path, data)
    }

    static func storePath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("majlis-media-\(UUID().uuidString)/messenger.json").path
    }

    /// A fake server that stores every message it is sent in one direct conversation.
    static func fakeServer() -> FakeSignalingClient {
        let seq = Mutex<Int64>(0)
        return FakeSignalingClient(user: "huda") { op, _ in
            guard op == "msg.send" else { return .success(.object([:])) }
            let next = seq.withLock { value in
                value += 1
                return value
            }
            return .success(["conversation": "d-1", "seq": .int(next), "ts": .int(1_000 + next)])
        }
    }

    @Test func aCutUploadGoesOnFromWhereItStoodAndAnExpiredOneStartsAgain() async throws {
        let photo = try Self.file(700_000, named: "photo.jpg")
        let small = try Self.file(20_000, named: "thumb.png")
        let transfer = MemoryMediaTransfer()
        let store = Self.storePath()
        // The network is cut after the first piece (256 KiB) of the photo.
        transfer.failAfter(1)
        let first = Messenger(signaling: Self.fakeServer(), store: FileMessengerStore(path: store), transfer: transfer)
        await #expect(throws: MajlisError.unreachable("the network is cut")) {
            try await first.send(
                file: photo.path, type: "image/jpeg", to: .user("omar"), thumbnail: (small.path, "image/png"), details: ["width": 800, "height": 600],
                clientMsgId: "photo-1")
        }
        let cut = try #require(await first.state.pending.first)
        #expect(cut.uploads.map(\.offset) == [262_144, 0] && cut.uploads[0].upload == "up-1")
        guard case .failed = cut.status else { Issue.record("\(cut.status)"); return }

        // The app starts again from its store: the photo goes on from 256 KiB, then the thumbnail.
        transfer.failAfter(nil)
        let signaling = Self.fakeServer()
        let second = Messenger(signaling: signaling, store: FileMessengerStore(path: store), transfer: transfer)
        #expect(await second.state.pending.map(\.id) == ["photo-1"])
        try await second.start()
        #expect(await second.state.pending.isEmpty)
        #expect(transfer.appends == 2 + 2 + 1)
        let sent = try #require(signaling.lastArgs(of: "msg.send"))
        #expect(sent["type"] == "image" && sent["fallback"] == "[Photo]" && sent["clientMsgId"] == "photo-1")
        #expect(sent["payload"] == ["width": 800, "height": 600, "media": "up-1", "thumbnail": "up-2"])
        #expect(try await second.download("up-1") == photo.data)
        #expect(try await second.download("up-2", range: 100..<200) == small.data.subdata(in: 100..<200))
        #expect(signaling.ops.filter { $0 == "msg.send" }.count == 1)

        // An upload the server no longer keeps is made again and sent whole.
        transfer.failAfter(1)
        await #expect(throws: MajlisError.self) { try await second.send(file: photo.path, type: "image/jpeg", to: .conversation("d-1"), clientMsgId: "photo-2") }
        transfer.expire("up-3")
        transfer.failAfter(nil)
        #expect(try await second.retry("photo-2")?.payload?["media"] == "up-4")
        #expect(try await second.download("up-4") == photo.data)
    }

    @Test func filesThatCannotBeSentAreRefusedBeforeAnythingIsPending() async throws {
        let messenger = Messenger(signaling: Self.fakeServer(), transfer: MemoryMediaTransfer())
        let photo = try Self.file(10, named: "a.png")
        await #expect(throws: MajlisError.misuse("application/pdf is not an image, audio or video type")) {
            try await messenger.send(file: photo.path, type: "application/pdf", to: .user("omar"))
        }
        await #expect(throws: MajlisError.misuse("cannot read /nonexistent/b.png")) {
            try await messenger.send(file: "/nonexistent/b.png", type: "image/png", to: .user("omar"))
        }
        await #expect(throws: MajlisError.misuse("a thumbnail is an image, not audio/ogg")) {
            try await messenger.send(file: photo.path, type: "video/mp4", to: .user("omar"), thumbnail: (photo.path, "audio/ogg"))
        }
        let noTransfer = Messenger(signaling: Self.fakeServer())
        await #expect(throws: MajlisError.self) { try await noTransfer.send(file: photo.path, type: "image/png", to: .user("omar")) }
        #expect(await messenger.state.pending.isEmpty)
    }

    /// A transfer to the real server that is cut after `pieces` appends (as a killed app is).
    final class CutTransfer: MediaTransfer {
        let real: HTTPMediaTransfer
        let left: Mutex<Int>
        let sent = Mutex<Int64>(0)

        init(_ real: HTTPMediaTransfer, pieces: Int) {
            self.real = real
            left = Mutex(pieces)
        }

        var bytesSent: Int64 { sent.withLock { $0 } }

        func create(length: Int64, type: String, filename: String?) async throws(MajlisError) -> String {
            try await real.create(length: length, type: type, filename: filename)
        }

        func offset(of upload: String) async throws(MajlisError) -> Int64? { try await real.offset(of: upload) }

        func append(_ bytes: Data, to upload: String, at offset: Int64) async throws(MajlisError) -> Int64 {
            guard left.withLock({ left in
                left -= 1
                return left >= 0
            }) else { throw MajlisError.unreachable("cut") }
            sent.withLock { $0 += Int64(bytes.count) }
            return try await real.append(bytes, to: upload, at: offset)
        }

        func download(_ media: String, range: Range<Int64>?) async throws(MajlisError) -> Data { try await real.download(media, range: range) }
    }

    @Test func aVoiceNoteCutThreeTimesOnTheRealServerIsDeliveredOnceByteIdentical() async throws {
        let server = try TestServer()
        defer { server.destroy() }
        let voice = try Self.file(1_300_000, named: "note.ogg")
        let store = Self.storePath()
        let omar = LiveSignalingClient(url: server.url, token: server.token("omar"))
        _ = try await omar.connect()
        let omars = Messenger(signaling: omar, transfer: HTTPMediaTransfer(signaling: omar))
        try await omars.start()
        // Huda's app is killed three times mid-upload (after 1, 2 and 1 of the 5 pieces) and
        // started again from its store each time.
        var sent: Int64 = 0
        for (round, pieces) in [1, 2, 1, 5].enumerated() {
            let huda = LiveSignalingClient(url: server.url, token: server.token("huda"))
            _ = try await huda.connect()
            let transfer = CutTransfer(HTTPMediaTransfer(signaling: huda), pieces: pieces)
            let messenger = Messenger(signaling: huda, store: FileMessengerStore(path: store), transfer: transfer)
            if round == 0 {
                await #expect(throws: MajlisError.unreachable("cut")) {
                    try await messenger.send(file: voice.path, type: "audio/ogg", to: .user("omar"), details: ["duration": 81_000], clientMsgId: "note-1")
                }
            } else {
                try await messenger.start()
            }
            sent += transfer.bytesSent
            let pending = await messenger.state.pending
            #expect(pending.isEmpty == (round == 3), "round \(round): \(pending)")
            await huda.disconnect()
        }
        // Each byte went up once: every start went on from where the server stood.
        #expect(sent == 1_300_000)
        #expect(await eventually { await omars.state.messages.values.joined().count == 1 })
        let message = try #require(await omars.state.messages.values.joined().first)
        #expect(message.type == "voice" && message.fallback == "[Voice message]" && message.clientMsgId == "note-1")
        #expect(message.payload?["mime"] == "audio/ogg" && message.payload?["size"] == 1_300_000 && message.payload?["duration"] == 81_000)
        let media = try #require(message.payload?["media"]?.stringValue)
        #expect(try await omars.download(media) == voice.data)
        #expect(try await omars.download(media, range: 1_000_000..<1_000_010) == voice.data.subdata(in: 1_000_000..<1_000_010))
        await omar.disconnect()
    }
}
