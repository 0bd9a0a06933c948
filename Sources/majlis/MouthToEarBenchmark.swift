import Foundation
import MajlisAudio
import MajlisKit
import MajlisProtocol
import MajlisTransport
import Synchronization

/// `majlis bench mouth-to-ear`: a burst handed to the speaker's microphone, found at the
/// listener's speaker, one process and one clock, through a real `majlis serve`.
enum MouthToEarBenchmark {
    static let help = """
        usage: majlis bench mouth-to-ear [--bursts N]
        Starts `majlis serve`, a speaker and a listener (the SDK's VoiceRoom and LiveMediaEngine), and times
        N bursts (default 10) from the moment the microphone hands out the burst's first frame to the moment
        the listener's output plays it. Prints p50 and max.
        """

    /// Silence, then a 1 kHz burst when triggered; remembers when the burst started.
    final class BurstSource: AudioSource, @unchecked Sendable {
        // Audited: `state` is behind its lock; `generator` is used on the media clock thread only.
        private let state = Mutex<(armed: Bool, remaining: Int, startedAt: UInt64?)>((false, 0, nil))
        private var generator = ToneGenerator(frequency: 1_000, amplitude: 0.5)

        func arm() { state.withLock { $0 = (true, 5, nil) } }
        var startedAt: UInt64? { state.withLock { $0.startedAt } }

        func nextFrame() -> [Int16] {
            let playing = state.withLock { state -> Bool in
                guard state.armed, state.remaining > 0 else { return false }
                if state.startedAt == nil { state.startedAt = DispatchTime.now().uptimeNanoseconds }
                state.remaining -= 1
                return true
            }
            return playing ? generator.next() : [Int16](repeating: 0, count: AudioFormat.frameSamples)
        }
    }

    /// Notes when loud audio first comes out.
    final class DetectorSink: AudioSink {
        private let heardAt = Mutex<UInt64?>(nil)
        func reset() { heardAt.withLock { $0 = nil } }
        var time: UInt64? { heardAt.withLock { $0 } }
        func play(_ frame: [Int16]) {
            guard LevelMeter.dBov(frame) > -30 else { return }
            let now = DispatchTime.now().uptimeNanoseconds
            heardAt.withLock { if $0 == nil { $0 = now } }
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let bursts = try args.int("bursts", default: 10, range: 1...1000)
        try args.rejectUnknown()
        let server = try ServerProcess()
        defer { server.stop() }
        let url = server.url
        let source = BurstSource()
        let sink = DetectorSink()
        let speakerMedia = try LiveMediaEngine(source: source, sink: NullSink())
        let listenerMedia = try LiveMediaEngine(source: SilenceSource(), sink: sink)
        let rooms = try MediaBenchmark.blocking { () async throws -> [VoiceRoom] in
            func room(_ user: String, _ media: LiveMediaEngine) async throws -> VoiceRoom {
                let token = ServerProcess.token(user)
                let signaling = LiveSignalingClient(url: url, token: token)
                _ = try await signaling.connect()
                let room = VoiceRoom(roomId: "ear", signaling: signaling, media: media)
                try await room.join(create: RoomSettings())
                return room
            }
            let speaker = try await room("mouth", speakerMedia)
            let listener = try await room("ear", listenerMedia)
            try await speaker.takeSeat(0)
            return [speaker, listener]
        }
        Thread.sleep(forTimeInterval: 1)
        var delays: [Double] = []
        // The rooms (and their connections) must live through the measurement.
        withExtendedLifetime(rooms) {
            for _ in 0..<bursts {
                sink.reset()
                source.arm()
                let deadline = Date().addingTimeInterval(2)
                while sink.time == nil && Date() < deadline { usleep(1_000) }
                if let heard = sink.time, let started = source.startedAt {
                    delays.append(Double(heard - started) / 1e6)
                }
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
        let speakerStop = speakerMedia
        let listenerStop = listenerMedia
        try MediaBenchmark.blocking {
            await speakerStop.stop()
            await listenerStop.stop()
        }
        say(
            String(
                format: "mouth to ear (%d of %d bursts heard, clean loopback): p50 %.1f ms, max %.1f ms",
                delays.count, bursts,
                SignalingBenchmark.percentile(delays, 0.5), delays.max() ?? 0))
        return 0
    }
}
