import Foundation
import MajlisTestSupport
import MajlisAudio
import MajlisProtocol
import Synchronization

/// Test speech made on this machine with espeak-ng (Debian's `espeak-ng`), 48 kHz mono.
public enum SpeechSample {
    /// About five seconds of one English sentence: enough for PESQ, where a test plays it
    /// again and again in real time.
    public static let sentence = "The majlis is open tonight, and everyone is welcome to sit and listen."

    /// About eleven seconds of two English sentences.
    public static let sentences = sentence + " When the host invites you, take a seat and speak, and the whole room will hear you clearly."

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// What was spoken already, by text: the same text makes the same speech.
    private static let spoken = Mutex<[String: [Int16]]>([:])

    /// One program at a time: Foundation's `Process` on Linux, started from several threads at
    /// once with pipes, left a reader waiting for an end of file that never came.
    private static let oneAtATime = Mutex(())

    /// Speaks `text` into a 48 kHz mono buffer, in espeak-ng's `voice` (its default: none given)
    /// at `pitch` (0-99; its default: none given) and `speed` words a minute.
    public static func make(_ text: String = sentences, voice: String? = nil, pitch: Int? = nil, speed: Int = 150) throws -> [Int16] {
        let key = "\(voice ?? "")|\(pitch ?? -1)|\(speed)|\(text)"
        if let known = spoken.withLock({ $0[key] }) { return known }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-speech-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let options = (voice.map { ["-v", $0] } ?? []) + (pitch.map { ["-p", "\($0)"] } ?? [])
        let status = try run("espeak-ng", options + ["-s", "\(speed)", "-w", path, text]).status
        guard status == 0 else { throw Failure(description: "espeak-ng failed (is it installed? scripts/install-deps --test)") }
        let speech = try Resampler.toTransportFormat(WAVFile.read(path)).int16
        spoken.withLock { $0[key] = speech }
        return speech
    }

    /// Six people talking at once (espeak-ng's male voices at six pitches, each from another
    /// point of its talk), `count` samples, RMS 1: a café, a crowd, the room next door.
    public static func babble(count: Int, seed: UInt64) throws -> [Double] {
        let talk = "We were talking about the weather, the price of bread, the football match yesterday, and what we should have for dinner tonight, perhaps fish or rice with vegetables, and a little cake after."
        var mixed = [Double](repeating: 0, count: count)
        var random = SplitMix64(seed: seed)
        for talker in 1...6 {
            let voice = try make(talk, voice: "en-us+m\(talker)", pitch: 30 + 8 * talker, speed: 160)
            let level = max(1, SyntheticSound.activeLevel(voice))
            var index = Int.random(in: 0..<voice.count, using: &random)
            for sample in 0..<count {
                mixed[sample] += Double(voice[index]) / level
                index = (index + 1) % voice.count
            }
        }
        let rms = (mixed.reduce(0) { $0 + $1 * $1 } / Double(max(1, count))).squareRoot()
        return mixed.map { $0 / max(rms, 1e-9) }
    }

    /// Runs a program found on PATH; returns its exit status and standard output.
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        try oneAtATime.withLock { _ in try launch(executable, arguments) }
    }

    private static func launch(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [executable] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        return (process.waitForExit(), String(decoding: data, as: UTF8.self))
    }
}
