import Foundation
import MajlisAudio
import MajlisCommandLine
import MajlisKit
import MajlisLab
import MajlisTransport
import MajlisProtocol

/// `majlis bench audio`: the audio toolbox against its goals, on espeak-ng speech and scenes
/// synthesized here (pink noise, a room's echo path, voiced tones).
enum AudioBenchmark {
    static let help = """
        usage: majlis bench audio [--runs N] [--noise-suppression LEVEL] [--voice VOICE] [--keep DIR] [--only echo]
        Measures, N times (default 3, each with other noise and another echo path), and prints each run and the
        median: noise suppression (PESQ-WB as the room hears it, through Opus, of speech in pink noise and in
        six-talker babble at 10 dB SNR, sent as it is and through the standard processing; clean speech both ways
        and its level; at LEVEL, default the standard one; and DNSMOS where PyPI's speechmos is installed), echo
        cancellation (the standard processing, the far end played 60 ms after it is rendered into a room ringing for
        280 ms with the echo 6 dB under it: ERLE after 5 s of far-end speech and again 5 s after double talk,
        PESQ-WB of the near end during double talk), pitch shift (measured semitones at -12, -5, +4, +12) and the
        equalizer (the largest error of the measured band gains against three settings); once, spatial sound (the
        interaural delay and level difference of noise placed at 90 degrees left and right, against the HRTF's
        own delay, and how different front and back sound); and each run, the pre-call tests against a server in
        this process: the echo test (how long after speaking it is heard back, asked 2 s, and PESQ-WB) and the
        probe through the network simulator at 300 kb/s, 5% loss, 50 ms each way (asking 600 kb/s up,
        200 kb/s down). --keep writes the first run's sounds to DIR as WAV files (speech, noisy, suppressed,
        the echo canceller's microphone and output, the echo test heard back, the presets applied to the speech),
        each with its spectrogram (PNG, through scripts/spectrogram.py when Python has numpy). Needs espeak-ng and
        the PESQ judge (scripts/install-deps --test). --voice speaks the speech in another of espeak-ng's voices
        (en-us+f3, en+m3; default: its default), as outside judges use others. Last, the noise suppressor's cost
        (and its speech mask's), ms of a core a second of sound, beside Opus's encoding of the same speech. The
        yardstick: the time one run takes against how long PESQ takes to judge the unprocessed speech, on the
        same machine. --only echo measures echo cancellation alone, each run in its room, with the far end
        uncancelled as its yardstick.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        var args = try Arguments(arguments)
        if args.wantsHelp {
            say(help)
            return 0
        }
        let runs = try args.int("runs", default: 3, range: 1...50)
        let levelName = args.string("noise-suppression") ?? VoiceProcessing.standard.noiseSuppression.rawValue
        guard let level = VoiceProcessing.Level(rawValue: levelName), level != .off else {
            throw Arguments.Failure(description: "--noise-suppression is one of low, moderate, high, veryHigh")
        }
        let keep = args.string("keep")
        let voice = args.string("voice")
        let only = args.string("only")
        guard only == nil || only == "echo" else { throw Arguments.Failure(description: "--only takes echo") }
        try args.rejectPositional("bench audio")
        if let keep { try FileManager.default.createDirectory(atPath: keep, withIntermediateDirectories: true) }
        let speech = try SpeechSample.make(voice: voice)
        let other = try SpeechSample.make("Good evening. Can everyone hear me now? I am speaking from my seat, while the music plays.", voice: voice)
        // DNSMOS where speechmos is installed (its models are large, so it is optional).
        let dnsmos = DNSMOSJudge.isAvailable
        if !dnsmos { say("DNSMOS: not measured (pip install speechmos librosa onnxruntime into .venv to have it)") }
        var rows: [[Double]] = []
        for run in 0..<runs {
            let seed = UInt64(run + 1)
            // Another room each run, as the outside judges' runs: how long it rings, and how late
            // the sound server plays.
            let rooms: [(reverberation: Double, deviceLatency: Int)] = [(280, 40), (250, 80), (300, 20)]
            let room = rooms[run % rooms.count]
            let echo = try ToolboxTrial.echoCancellation(farEnd: speech, nearEnd: other, deviceLatency: room.deviceLatency, reverberation: room.reverberation, seed: seed)
            if only == "echo" {
                say(String(
                    format: "run %d: echo (room ringing %.0f ms, sound server %d ms) ERLE %.1f dB, %.1f dB after double talk, double talk PESQ %.2f (uncancelled %.2f)",
                    run + 1, room.reverberation, room.deviceLatency, echo.erle, echo.erleAfterDoubleTalk, echo.doubleTalk, echo.doubleTalkUncancelled))
                rows.append([echo.erle, echo.erleAfterDoubleTalk, echo.doubleTalk])
                continue
            }
            let noise = try ToolboxTrial.noiseSuppression(speech: speech, level: level, seed: seed)
            let babble = try ToolboxTrial.noiseSuppression(speech: speech, noise: .babble, level: level, seed: seed)
            let pitches = try [-12.0, -5, 4, 12].map { ($0, try ToolboxTrial.pitchShift(semitones: $0)) }
            let pitchError = pitches.map { abs($0.1 - $0.0) }.max() ?? 0
            let settings: [[Double]] = [
                [12, 6, 0, -6, -12, -12, -6, 0, 6, 12], [-15, 15, -15, 15, -15, 15, -15, 15, -15, 15],
                [3, 3, 3, 3, 3, 3, 3, 3, 3, 3].map { $0 * Double(run % 5 + 1) },
            ]
            let equalizerError = try settings.map { gains in
                zip(try ToolboxTrial.equalizerBands(gains: gains), gains).map { abs($0 - $1) }.max() ?? 0
            }.max() ?? 0
            // The equalizer as the room hears it through Opus (docs/sdk.md), against the equalizer
            // alone: the worst band under 2 kHz and from 2 to 8 kHz, and how much of the 16 kHz band
            // arrives.
            let alternating = (0..<10).map { $0 % 2 == 0 ? 9.0 : -9 }
            let alone = try ToolboxTrial.equalizerBandsHeard(gains: alternating, profile: nil, seed: seed)
            let throughOpus = try [AudioProfile.music, .speech].map { profile in
                let heard = try ToolboxTrial.equalizerBandsHeard(gains: alternating, profile: profile, seed: seed)
                let worst = { (bands: Range<Int>) in bands.map { abs(heard[$0] - alone[$0]) }.max() ?? 0 }
                return String(format: "%@ worst %.1f dB under 2 kHz and %.1f dB at 2-8 kHz, 16 kHz %.0f%% of it", profile.rawValue, worst(0..<6), worst(6..<9), heard[9] / alone[9] * 100)
            }
            say("run \(run + 1): the equalizer (±9 dB) through Opus against the equalizer alone: \(throughOpus.joined(separator: "; "))")
            if dnsmos, let noisy = noise.sounds["pink-noisy"], let suppressed = noise.sounds["pink-suppressed"] {
                let scores = try DNSMOSJudge.scores([noisy, suppressed])
                say(String(
                    format: "run %d: DNSMOS of the speech in pink noise: background %.2f -> %.2f (goal 3.7), speech %.2f -> %.2f, overall %.2f -> %.2f",
                    run + 1, scores[0].bak, scores[1].bak, scores[0].sig, scores[1].sig, scores[0].ovrl, scores[1].ovrl))
            }
            say(String(
                format: "run %d: pink noise PESQ %.2f -> %.2f (%+.2f), babble %.2f -> %.2f (%+.2f), clean %.2f of %.2f (-%.2f, level %+.1f dB) | echo (room ringing %.0f ms, sound server %d ms) ERLE %.1f dB, %.1f dB after double talk, double talk PESQ %.2f (uncancelled %.2f) | pitch %@ (worst error %.2f st) | equalizer worst band error %.2f dB",
                run + 1, noise.noisy, noise.suppressed, noise.improvement, babble.noisy, babble.suppressed, babble.improvement,
                noise.clean, noise.reference, noise.cleanLoss, noise.cleanLevelChange,
                room.reverberation, room.deviceLatency, echo.erle, echo.erleAfterDoubleTalk, echo.doubleTalk, echo.doubleTalkUncancelled,
                pitches.map { String(format: "%+.0f->%+.2f", $0.0, $0.1) }.joined(separator: " "), pitchError, equalizerError))
            let precall = try runBlocking { () async throws -> (EchoTrial.Figures, ProbeReport) in
                let server = try LabServer()
                defer { server.stop() }
                let echoed = try await EchoTrial.run(speech, delay: 2, server: server)
                let impaired = try LabServer(impairment: NetworkSimulator.Settings(loss: 0.05, delay: 50, seed: seed, rate: 300_000))
                defer { impaired.stop() }
                let signaling = LiveSignalingClient(url: impaired.url, token: impaired.token("prober"))
                _ = try await signaling.connect()
                let report = try await NetworkProbe.run(signaling: signaling, up: 600_000, down: 200_000)
                await signaling.disconnect()
                return (echoed, report)
            }
            let echoScore = try PESQJudge.scores(reference: speech, degraded: [precall.0.heard])[0]
            if let keep, run == 0 {
                var sounds = noise.sounds.merging(babble.sounds) { first, _ in first }.merging(echo.sounds) { first, _ in first }
                sounds["speech"] = speech
                sounds["echo-test-heard"] = precall.0.heard
                for preset in VoiceEffect.Preset.allCases where preset != .none {
                    sounds["effect-\(preset.rawValue)"] = try ToolboxTrial.applied(preset.effect, to: speech)
                }
                try Self.write(sounds, to: keep)
            }
            let probe = precall.1
            say(String(
                format: "run %d: echo test heard back after %.0f ms (asked 2000; playout buffer %.0f ms), PESQ %.2f | probe: up %.0f kb/s (set 300), down %.0f kb/s (asked 200), loss up %.1f%% down %.1f%% (set 5), round trip %.0f ms (set 100), %@",
                run + 1, precall.0.lag, precall.0.playout, echoScore, Double(probe.uplink.bandwidth) / 1_000, Double(probe.downlink.bandwidth) / 1_000,
                probe.uplink.loss * 100, probe.downlink.loss * 100, probe.roundTrip ?? -1, probe.quality.rawValue))
            rows.append([
                noise.improvement, noise.cleanLoss, echo.erle, echo.doubleTalk, pitchError, equalizerError, echoScore, abs(precall.0.lag - 2_000),
                babble.improvement, echo.erleAfterDoubleTalk,
            ])
        }
        func median(_ column: Int) -> Double {
            let values = rows.map { $0[column] }.sorted()
            return values[values.count / 2]
        }
        if only == "echo" {
            say(String(format: "median of %d: ERLE %.1f dB (goal 30), %.1f dB after double talk (goal 25) | double talk PESQ %.2f (goal 3.0)", runs, median(0), median(1), median(2)))
            return 0
        }
        let left = try ToolboxTrial.spatial(SpatialPosition(azimuth: 90))
        let right = try ToolboxTrial.spatial(SpatialPosition(azimuth: -90))
        let front = try ToolboxTrial.spatial(SpatialPosition(azimuth: 0)).stereo
        let back = try ToolboxTrial.spatial(SpatialPosition(azimuth: 180)).stereo
        let difference = zip(front, back).reduce(0.0) { $0 + pow(Double($1.0) - Double($1.1), 2) } / max(1, front.reduce(0.0) { $0 + Double($1) * Double($1) })
        say(String(
            format: "spatial: 90 left: left ear first by %.3f ms (HRTF %.3f), louder by %.1f dB | 90 right: %.3f ms (HRTF %.3f), %.1f dB | front and back differ by %.0f%% of the power",
            left.interauralDelay, left.hrtfDelay, left.levelDifference, right.interauralDelay, right.hrtfDelay, right.levelDifference, difference * 100))
        say(String(
            format: "median of %d: noise suppression %+.2f PESQ in pink noise (goal +0.50), %+.2f in babble (goal +0.20), clean loss %.2f (goal at most 0.10) | ERLE %.1f dB (goal 30), %.1f dB after double talk (goal 25) | double talk PESQ %.2f (goal 3.0) | pitch error %.2f st (goal 0.2) | equalizer error %.2f dB (goal 1) | echo test PESQ %.2f (goal 3.5), off its delay by %.0f ms (goal 100)",
            runs, median(0), median(8), median(1), median(2), median(9), median(3), median(4), median(5), median(6), median(7)))
        let cost = try processingCost(speech, runs: runs)
        say(String(
            format: "cost, ms of a core a second of sound, median of %d: noise suppression %.1f, of which the speech mask %.1f; beside Opus encoding at 32 kb/s %.1f (suppression %.2f times Opus)",
            runs, cost.suppression, cost.suppression - cost.withoutMask, cost.opus, cost.suppression / cost.opus))
        return 0
    }

    /// The noise suppressor's cost on `speech`, following noise (with the speech mask) and taking
    /// only an echo's residue (without it), and Opus's encoding of the same sound as the yardstick:
    /// ms of a core per second of sound, each the median of `runs`.
    static func processingCost(_ speech: [Int16], runs: Int) throws -> (suppression: Double, withoutMask: Double, opus: Double) {
        let frames = stride(from: 0, to: speech.count - AudioFormat.frameSamples + 1, by: AudioFormat.frameSamples).map {
            Array(speech[$0..<$0 + AudioFormat.frameSamples])
        }
        let seconds = Double(frames.count * AudioFormat.frameSamples) / Double(AudioFormat.sampleRate)
        func median(_ work: () throws -> Void) rethrows -> Double {
            var times: [Double] = []
            for _ in 0..<runs {
                let elapsed = try ContinuousClock().measure(work)
                times.append(Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15)
            }
            return times.sorted()[times.count / 2] / seconds
        }
        func suppress(followsNoise: Bool) {
            var suppressor = NoiseSuppressor(followsNoise: followsNoise)
            for frame in frames {
                var frame = frame
                suppressor.process(&frame)
            }
        }
        let suppression = median { suppress(followsNoise: true) }
        let withoutMask = median { suppress(followsNoise: false) }
        let opus = try median {
            let encoder = try OpusEncoder()
            for frame in frames { _ = try encoder.encode(frame) }
        }
        return (suppression, withoutMask, opus)
    }

    /// Writes each sound to `directory` as NAME.wav, and its spectrogram as NAME.png where
    /// scripts/spectrogram.py can run.
    static func write(_ sounds: [String: [Int16]], to directory: String) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/spectrogram.py").path
        var paths: [String] = []
        for (name, samples) in sounds.sorted(by: { $0.key < $1.key }) {
            let path = "\(directory)/\(name).wav"
            try WAVFile.write(PCMBuffer(sampleRate: AudioFormat.sampleRate, channels: 1, int16: samples), to: path)
            paths.append(path)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + paths
        process.standardOutput = FileHandle.nullDevice
        let drawn = (try? process.run()).map { process.waitUntilExit() } != nil && process.terminationStatus == 0
        say("sounds written to \(directory)\(drawn ? ", each with its spectrogram" : " (no spectrograms: scripts/spectrogram.py needs Python with numpy)")")
    }
}
