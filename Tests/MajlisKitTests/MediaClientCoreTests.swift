import Foundation
import MajlisKit
import Synchronization
import Testing

/// The media core runs the whole audio path without a device or a socket: the pipeline's
/// processing and taps, spatial sound, the settings in the order asked.
@Suite struct MediaClientCoreTests {
    final class CountingTap: AudioTap {
        let frames = Mutex<[(count: Int, channels: Int)]>([])
        func process(_ frame: inout [Int16], channels: Int) { frames.withLock { $0.append((frame.count, channels)) } }
        var calls: Int { frames.withLock { $0.count } }
    }

    @Test func theMicrophoneAndThePlayoutPassTheTapsOfTheCore() throws {
        let core = try MediaClientCore()
        let recording = CountingTap()
        let playout = CountingTap()
        core.apply(.tap(recording, at: .recording))
        core.apply(.tap(playout, at: .playout))
        core.apply(.publish(true))
        let tone = (0..<AudioFormat.frameSamples).map { Int16(8_000 * sin(Double($0) * 0.05)) }
        let tick = core.tick(now: 0, microphone: tone)
        #expect(recording.calls == 1 && playout.calls == 1)
        #expect(tick.playout.count == AudioFormat.frameSamples)
        // Without a microphone frame nothing is recorded, and the playout still runs.
        _ = core.tick(now: 20, microphone: nil)
        #expect(recording.calls == 1 && playout.calls == 2)
    }

    @Test func settingsApplyInTheOrderAsked() throws {
        let core = try MediaClientCore()
        for command: MediaCommand in [.publish(true), .publish(false), .publish(true)] { core.apply(command) }
        #expect(core.publishing)
        // A recording waits for the path to be bound; a device does not.
        #expect(!core.wantsMicrophone(live: false) && core.wantsMicrophone(live: true))
        core.apply(.publish(false))
        #expect(!core.wantsMicrophone(live: true))
    }

    /// Spatial sound renders in stereo (the playout tap sees two channels) on a stereo device;
    /// a mono device refuses it and keeps playing mono. (That each speaker is heard in their
    /// place: `VirtualCallTests`.)
    @Test func spatialSoundIsRenderedOnlyForAStereoDevice() throws {
        for (device, rendered) in [(2, 2), (1, 1)] {
            let core = try MediaClientCore(playbackChannels: device)
            let playout = CountingTap()
            core.apply(.tap(playout, at: .playout))
            core.apply(.spatial([7: SpatialPosition(azimuth: -60)]))
            let tick = core.tick(now: 0, microphone: nil)
            #expect(playout.frames.withLock { $0.map(\.channels) } == [rendered])
            #expect(tick.playout.count == device * AudioFormat.frameSamples)
            core.apply(.spatial(nil))
            _ = core.tick(now: 20, microphone: nil)
            #expect(playout.frames.withLock { $0.last?.channels } == 1)
        }
    }
}
