import MajlisAudio
import MajlisKit
import MajlisLab
import MajlisProtocol
import MajlisTestSupport
import Synchronization
import Testing

/// The voice pipeline in a real call: what the speaker's app asks of `VoiceRoom` changes what the
/// listener hears. What is judged is which tone is heard and how loud, with margins a stalled
/// frame does not eat, so these go through `RealTimeGate` in pairs.
@Suite(.serialized) struct VoiceEffectCallTests {
    @Test func aPitchEffectSetDuringTheCallIsHeardByTheListener() async throws {
        try await RealTimeGate.inPairs {
            let server = try LabServer()
            defer { server.stop() }
            let sink = RecordingSink()
            let call = try await LabCall(server: server, source: ToneSource(frequency: 300), sink: sink)
            func strongest() -> Double {
                let heard = sink.recorded.suffix(12 * AudioFormat.frameSamples)
                guard heard.count == 12 * AudioFormat.frameSamples, LevelMeter.dBov(Array(heard)) > -40 else { return 0 }
                return ToneDetector.strongest(of: [300, 600], in: Array(heard)) ?? 0
            }
            #expect(await eventually { strongest() == 300 }, "the voice as it is")
            await call.speaker.setVoiceEffect(VoiceEffect(pitch: 12))
            #expect(await eventually { strongest() == 600 }, "an octave up")
            await call.speaker.setVoiceEffect(.none)
            #expect(await eventually { strongest() == 300 }, "as it was again")
            await call.end()
        }
    }

    @Test func musicSentToTheRoomIsHeardAndLocalMusicIsNot() async throws {
        try await RealTimeGate.inPairs {
            let server = try LabServer()
            defer { server.stop() }
            let sink = RecordingSink()
            let call = try await LabCall(server: server, source: ScriptedSource(), sink: sink)
            var tone = ToneGenerator(frequency: 700, amplitude: 0.3)
            let music = MusicTrack(samples: tone.next(10 * AudioFormat.sampleRate))
            func hearsMusic() -> Bool {
                let heard = Array(sink.recorded.suffix(12 * AudioFormat.frameSamples))
                return heard.count == 12 * AudioFormat.frameSamples && LevelMeter.dBov(heard) > -30
                    && ToneDetector.strongest(of: [350, 700, 1_400], in: heard) == 700
            }
            call.speakerMedia.play(music, loops: 0, destination: .room)
            #expect(await eventually { hearsMusic() }, "the room hears the music")
            music.stop()
            #expect(await eventually { LevelMeter.dBov(Array(sink.recorded.suffix(12 * AudioFormat.frameSamples))) < -60 }, "and then silence")
            call.speakerMedia.play(music, loops: 0, destination: .local)
            // Played at the speaker only: the listener keeps hearing silence for a second.
            let mark = sink.recorded.count
            #expect(await eventually { sink.recorded.count >= mark + AudioFormat.sampleRate })
            #expect(LevelMeter.dBov(Array(sink.recorded[mark...])) < -60)
            await call.end()
        }
    }

    /// The music profile keeps what speech leaves out: a 15 kHz tone crosses the call (Opus's full
    /// band), where the speech profile's voice band cuts it.
    @Test(arguments: AudioProfile.allCases)
    func theMusicProfileCarriesTheFullBand(profile: AudioProfile) async throws {
        try await RealTimeGate.inPairs {
            let server = try LabServer()
            defer { server.stop() }
            let sink = RecordingSink()
            let call = try await LabCall(server: server, source: ToneSource(frequency: 15_000, amplitude: 0.3), sink: sink, profile: profile)
            // Three seconds of the call.
            let start = sink.recorded.count
            #expect(await eventually { sink.recorded.count > start + 3 * AudioFormat.sampleRate })
            let heard = Array(sink.recorded.suffix(AudioFormat.sampleRate / 2))
            let level = SyntheticSound.level(of: 15_000, in: heard)
            let sent = SyntheticSound.level(of: 15_000, in: ToneSource(frequency: 15_000, amplitude: 0.3).nextFrame())
            print("\(profile): 15 kHz heard at \(level - sent) dB of what was sent")
            if profile.isMusic {
                #expect(level - sent > -3, "the music profile keeps 15 kHz")
            } else {
                #expect(level - sent < -20, "the speech profile cuts it")
            }
            await call.end()
        }
    }

    /// Stereo music stays stereo: a track with 440 Hz on the left and 880 Hz on the right, sent
    /// with the stereo music profile, reaches a stereo listener with each tone in its own ear.
    @Test func stereoMusicStaysStereo() async throws {
        try await RealTimeGate.inPairs {
            let server = try LabServer()
            defer { server.stop() }
            let sink = RecordingSink(channels: 2)
            let call = try await LabCall(server: server, source: SilenceSource(), sink: sink, profile: .stereoMusic)
            var left = ToneGenerator(frequency: 440, amplitude: 0.3)
            var right = ToneGenerator(frequency: 880, amplitude: 0.3)
            let track = MusicTrack(samples: zip(left.next(10 * AudioFormat.sampleRate), right.next(10 * AudioFormat.sampleRate)).flatMap { [$0, $1] }, channels: 2)
            call.speakerMedia.play(track, loops: 0, destination: .room)
            // Three seconds of the call, then the last half second of each ear.
            let start = sink.recorded.count
            #expect(await eventually { sink.recorded.count > start + 2 * 3 * AudioFormat.sampleRate })
            let heard = Array(sink.recorded.suffix(AudioFormat.sampleRate))
            let leftEar = stride(from: 0, to: heard.count, by: 2).map { heard[$0] }
            let rightEar = stride(from: 1, to: heard.count, by: 2).map { heard[$0] }
            let separation = (
                left: SyntheticSound.level(of: 440, in: leftEar) - SyntheticSound.level(of: 880, in: leftEar),
                right: SyntheticSound.level(of: 880, in: rightEar) - SyntheticSound.level(of: 440, in: rightEar))
            print("stereo music: left ear 440 Hz over 880 Hz by \(separation.left) dB, right ear 880 Hz over 440 Hz by \(separation.right) dB")
            #expect(separation.left > 20 && separation.right > 20)
            await call.end()
        }
    }

    /// A tap that keeps what it sees.
    final class Heard: AudioTap {
        let frames = Mutex<[[Int16]]>([])
        func process(_ frame: inout [Int16], channels: Int) { frames.withLock { $0.append(frame) } }
    }

    /// An app's own audio in and out: PCM pushed into the speaker's engine is heard by a
    /// listener whose app pulls the mix, and a tap on the speaker's SSRC sees the voice alone.
    @Test func pushedPCMIsHeardThroughAPulledSinkAndASpeakersTap() async throws {
        try await RealTimeGate.inPairs {
            let server = try LabServer()
            defer { server.stop() }
            let source = PushedSource(capacity: 10 * AudioFormat.sampleRate)
            var tone = ToneGenerator(frequency: 500, amplitude: 0.3)
            source.push(tone.next(8 * AudioFormat.sampleRate))
            let sink = PulledSink(capacity: AudioFormat.sampleRate)
            let call = try await LabCall(server: server, source: source, sink: sink)
            #expect(await eventually { await call.listener.state.seats[0].ssrc != nil })
            let ssrc = try #require(await call.listener.state.seats[0].ssrc)
            let tap = Heard()
            call.listenerMedia.setTap(tap, at: .speaker(ssrc))
            #expect(await eventually {
                let pulled = sink.pull(AudioFormat.sampleRate / 4)
                return LevelMeter.dBov(pulled) > -30 && ToneDetector.strongest(of: [250, 500, 1_000], in: pulled) == 500
            }, "the app pulls the tone")
            #expect(await eventually { tap.frames.withLock { $0.contains { LevelMeter.dBov($0) > -30 } } }, "the speaker's tap sees the voice")
            await call.end()
        }
    }
}
