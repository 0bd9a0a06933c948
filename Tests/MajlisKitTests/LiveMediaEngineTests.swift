#if os(Linux)
import Foundation
import Synchronization
import MajlisAudio
import MajlisKit
import MajlisLab
import MajlisProtocol
import MajlisTransport
import Testing

@Suite struct LiveMediaEngineTests {
    /// A recording (a file, a script) is read only once the path to the server is bound: what
    /// a bot says from the moment it is seated is not spoken into a path still being set up,
    /// where the server would drop it. A microphone is read all the same (what is not read of
    /// it is gone anyway).
    @Test func aRecordingWaitsForTheMediaPathToBind() async throws {
        let unanswering = try UDPSocket(host: "127.0.0.1", port: 0)
        let media: JSONValue = [
            "udp": .string("127.0.0.1:\(unanswering.port)"), "ssrc": 7, "key": .string(Data(repeating: 1, count: SRTPSession.keyLength).base64EncodedString()),
        ]
        let recording = ScriptedSource()
        recording.play([Int16](repeating: 1_000, count: 48_000))
        let microphone = CountingSource()
        var engines: [LiveMediaEngine] = []
        for source in [recording, microphone] as [any AudioSource] {
            let engine = try LiveMediaEngine(source: source, sink: NullSink())
            await engine.configure(media)
            await engine.setPublishing(true)
            engines.append(engine)
        }
        // Unanswered, the recording's engine sends only bindings, four a second: when it has
        // sent five, it has ticked for a second.
        let deadline = Date().addingTimeInterval(60)
        while engines[0].statistics.datagramsSent < 5 || microphone.frames < 10, Date() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        for engine in engines { await engine.stop() }
        #expect(!engines[0].isBound && engines[0].statistics.datagramsSent >= 5)
        #expect(recording.played == 0)
        #expect(microphone.frames >= 10)
    }

    /// `stop()` returns once the engine's thread has ended: nothing is read after it, and an
    /// engine configured again runs one thread again.
    @Test func stopEndsTheEnginesThread() async throws {
        let unanswering = try UDPSocket(host: "127.0.0.1", port: 0)
        let media: JSONValue = [
            "udp": .string("127.0.0.1:\(unanswering.port)"), "ssrc": 7, "key": .string(Data(repeating: 1, count: SRTPSession.keyLength).base64EncodedString()),
        ]
        let microphone = CountingSource()
        let engine = try LiveMediaEngine(source: microphone, sink: NullSink())
        for round in 1...2 {
            let before = microphone.frames
            await engine.configure(media)
            await engine.setPublishing(true)
            let deadline = Date().addingTimeInterval(60)
            while microphone.frames < before + 5, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            await engine.stop()
            let atStop = microphone.frames
            #expect(atStop >= before + 5, "round \(round)")
            try await Task.sleep(for: .milliseconds(200))
            #expect(microphone.frames == atStop, "round \(round): read after stop() returned")
        }
    }
}

/// A live source that counts the frames read from it.
private final class CountingSource: AudioSource, Sendable {
    private let count = Atomic<Int>(0)
    var frames: Int { count.load(ordering: .relaxed) }
    func nextFrame() -> [Int16] {
        count.add(1, ordering: .relaxed)
        return [Int16](repeating: 0, count: AudioFormat.frameSamples)
    }
}
#endif
