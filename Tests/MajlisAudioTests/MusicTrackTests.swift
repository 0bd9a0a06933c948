import Foundation
import MajlisAudio
import MajlisLab
import MajlisProtocol
import MajlisTestSupport
import Testing

/// Music and sound effects: every file kind read back as it was written, and a track that
/// loops, pauses, seeks and keeps its volumes; the pipeline mixes it where it is meant to be heard.
@Suite struct MusicTrackTests {
    static func tone(_ frequency: Double, seconds: Double, amplitude: Double = 0.3) -> [Int16] {
        var generator = ToneGenerator(frequency: frequency, amplitude: amplitude)
        return generator.next(Int(seconds * Double(AudioFormat.sampleRate)))
    }

    @Test(arguments: SoundFile.Kind.allCases)
    func everyKindOfFileReadsBackAsItWasWritten(kind: SoundFile.Kind) async throws {
        let track = try await offPoolInPairs { try Self.writtenAndRead(kind) }
        #expect(abs(track.duration - 2_000) < 80, "\(kind): \(track.duration) ms")
        #expect(track.channels == 2)
        // Each channel keeps its own tone, at its level.
        let middle = Array(track.samples[track.samples.count / 3 / 2 * 2..<track.samples.count / 3 / 2 * 2 + 9_600])
        let left = stride(from: 0, to: middle.count, by: 2).map { middle[$0] }
        let right = stride(from: 1, to: middle.count, by: 2).map { middle[$0] }
        #expect(ToneDetector.strongest(of: [440, 660, 880], in: left) == 660)
        #expect(ToneDetector.strongest(of: [440, 660, 880], in: right) == 440)
        #expect(abs(LevelMeter.dBov(left) - LevelMeter.dBov(Self.tone(660, seconds: 0.1))) < 2)
    }

    /// Two seconds of a 660 Hz tone written as a file of `kind`, and read back as a track.
    static func writtenAndRead(_ kind: SoundFile.Kind) throws -> MusicTrack {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-music-\(UUID().uuidString).\(kind.rawValue)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Stereo at 44.1 kHz (Opus: 24 kHz, a rate it has), 660 Hz on the left and 440 Hz on the
        // right: made 48 kHz on the way in, still stereo.
        let rate = kind == .opus ? 24_000 : 44_100
        let left = try Resampler.resample(PCMBuffer(sampleRate: 48_000, channels: 1, int16: Self.tone(660, seconds: 2)), to: rate).samples
        let right = try Resampler.resample(PCMBuffer(sampleRate: 48_000, channels: 1, int16: Self.tone(440, seconds: 2)), to: rate).samples
        let stereo = PCMBuffer(sampleRate: rate, channels: 2, samples: zip(left, right).flatMap { [$0, $1] })
        try SoundFile.write(stereo, to: path, as: kind)
        return try MusicTrack(path: path)
    }

    @Test func unreadableFilesAreErrors() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-not-music-\(UUID().uuidString).mp3").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("this is not music".utf8).write(to: URL(fileURLWithPath: path))
        // Each says what is wrong in its own words, on one line.
        let damaged = #expect(throws: AudioError.self) { try MusicTrack(path: path) }
        #expect(damaged.map { "\($0)" } == "audio file: \(path): not a sound file that can be decoded (WAV, FLAC, Ogg Opus or Vorbis, MP3), or damaged")
        // Random bytes named .mp3 (libmpg123 finds false frame headers in them and, through
        // libsndfile, printed its resync notes).
        var generator = SplitMix64(seed: 7)
        try Data((0..<3_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: URL(fileURLWithPath: path))
        let random = #expect(throws: AudioError.self) { try MusicTrack(path: path) }
        #expect(random.map { "\($0)" }?.hasSuffix("or damaged") == true)
        let missing = #expect(throws: AudioError.self) { try MusicTrack(path: "/nonexistent/file.wav") }
        #expect(missing.map { "\($0)" } == "audio file: /nonexistent/file.wav: no such file")
        let folder = #expect(throws: AudioError.self) { try MusicTrack(path: FileManager.default.temporaryDirectory.path) }
        #expect(folder.map { "\($0)" }?.hasSuffix("a directory, not a sound file") == true)
    }

    @Test func aStereoRecordingIsSentInStereoWhereWhatIsSentIsStereo() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-stereo-mic-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Left a loud 440 Hz tone, right silent, at 48 kHz.
        var tone = ToneGenerator(frequency: 440, amplitude: 0.5)
        let left = (0..<5).flatMap { _ in tone.next() }
        let pairs: [Float] = left.flatMap { sample -> [Float] in [Float(sample) / 32_768, 0] }
        try WAVFile.write(PCMBuffer(sampleRate: AudioFormat.sampleRate, channels: 2, samples: pairs), to: path)

        let stereo = try FileSource(path: path, stereo: true)
        #expect(stereo.channels == 2)
        let pipeline = try VoicePipeline()
        pipeline.sendChannels = 2
        let sent = try #require(pipeline.send(stereo.nextFrame(), channels: stereo.channels))
        #expect(sent.count == 2 * AudioFormat.frameSamples)
        let peak = { (channel: Int) in stride(from: channel, to: sent.count, by: 2).map { abs(Int(sent[$0])) }.max() ?? 0 }
        #expect(peak(0) > 15_000 && peak(1) == 0, "left \(peak(0)), right \(peak(1))")

        // Mono where mono is asked for or sent: the channels' mean.
        let mono = try FileSource(path: path)
        #expect(mono.channels == 1)
        let voice = try VoicePipeline()
        let once = try #require(voice.send(try FileSource(path: path, stereo: true).nextFrame(), channels: 2))
        #expect(once.count == AudioFormat.frameSamples)
        // (Within a step of rounding: one halves integers, the other averages before rounding.)
        #expect(zip(once, mono.nextFrame()).allSatisfy { abs(Int($0) - Int($1)) <= 1 })
    }

    @Test func aTrackLoopsPausesSeeksAndStops() {
        let track = MusicTrack(samples: Self.tone(440, seconds: 0.1))  // five frames
        let pipeline = try! VoicePipeline()
        pipeline.add(track)
        func frames(_ count: Int) -> Int { (0..<count).filter { _ in pipeline.send(nil) != nil || pipeline.play([Int16](repeating: 0, count: 960)) != [Int16](repeating: 0, count: 960) }.count }
        #expect(frames(3) == 0, "not started")
        track.play(loops: 2, destination: .local)
        pipeline.add(track)
        #expect(frames(10) == 10, "two plays of five frames")
        #expect(frames(3) == 0 && !track.isPlaying && pipeline.playing.isEmpty)
        track.play(loops: 0, destination: .local)
        pipeline.add(track)
        #expect(frames(23) == 23, "until stopped")
        track.pause()
        #expect(frames(2) == 0 && track.isPlaying)
        track.resume()
        track.seek(to: 60)
        #expect(abs(track.position - 60) < 0.1)
        #expect(frames(1) == 1 && abs(track.position - 80) < 0.1)
        track.stop()
        #expect(frames(2) == 0)
    }

    @Test func theRoomHearsTheMusicSentAndTheUserHearsTheirOwnShare() throws {
        let pipeline = try VoicePipeline()
        let music = MusicTrack(samples: Self.tone(660, seconds: 1))
        music.play(loops: 1, destination: .room)
        music.setVolumes(send: 50, local: 200)
        pipeline.add(music)
        let voice = Self.tone(220, seconds: 0.02)
        let sent = try #require(pipeline.send(voice))
        #expect(ToneDetector.strongest(of: [220, 660], in: sent) != nil)
        #expect(SyntheticSound.level(of: 660, in: sent) - SyntheticSound.level(of: 220, in: sent) < -4, "music at half volume under the voice")
        let heard = pipeline.play([Int16](repeating: 0, count: 960))
        #expect(abs(LevelMeter.dBov(heard) - LevelMeter.dBov(Gain.apply(200, to: Self.tone(660, seconds: 0.02)))) < 1, "the local share at its own volume")
        // Local only: nothing of it is sent, and without a microphone nothing at all is.
        music.play(loops: 1, destination: .local)
        pipeline.add(music)
        #expect(pipeline.send(voice) == voice)
        #expect(pipeline.send(nil) == nil)
    }

    @Test func inEarMonitoringPlaysTheUsersOwnVoice() throws {
        let pipeline = try VoicePipeline()
        let voice = Self.tone(300, seconds: 0.02)
        _ = pipeline.send(voice)
        #expect(pipeline.play([Int16](repeating: 0, count: 960)) == [Int16](repeating: 0, count: 960), "off by default")
        pipeline.monitorVolume = 100
        _ = pipeline.send(voice)
        #expect(pipeline.play([Int16](repeating: 0, count: 960)) == voice)
    }
}
