#if os(Linux)
import Foundation
import MajlisAudio
import MajlisTransport

/// Mouth to ear in one process on one clock: bursts handed to the speaker's microphone, timed
/// until the listener's speaker plays them, through a real server (and the network simulator
/// on every leg when an impairment is given).
public enum MouthToEarTrial {
    /// Milliseconds for each burst heard (bursts not heard within `hearWithin` seconds are left out).
    public static func run(impairment: NetworkSimulator.Settings?, bursts: Int, hearWithin: Double = 2) async throws -> [Double] {
        let server = try LabServer(impairment: impairment)
        defer { server.stop() }
        let source = BurstSource()
        let sink = DetectorSink()
        let call = try await LabCall(server: server, room: "ear", source: source, sink: sink)
        try await Task.sleep(for: .seconds(2))  // the jitter buffer learns the path
        var delays: [Double] = []
        for _ in 0..<bursts {
            sink.reset()
            source.arm()
            let deadline = Date().addingTimeInterval(hearWithin)
            while sink.heardAt == nil && Date() < deadline { try await Task.sleep(for: .milliseconds(1)) }
            if let heard = sink.heardAt, let started = source.startedAt { delays.append(Double(heard - started) / 1e6) }
            try await Task.sleep(for: .milliseconds(500))
        }
        await call.end()
        return delays
    }
}
#endif
