import Foundation
import MajlisAudio
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

    /// Speaks `text` into a 48 kHz mono buffer.
    public static func make(_ text: String = sentences) throws -> [Int16] {
        if let known = spoken.withLock({ $0[text] }) { return known }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-speech-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let status = try run("espeak-ng", ["-s", "150", "-w", path, text]).status
        guard status == 0 else { throw Failure(description: "espeak-ng failed (is it installed? scripts/install-deps --test)") }
        let speech = try Resampler.toTransportFormat(WAVFile.read(path)).int16
        spoken.withLock { $0[text] = speech }
        return speech
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
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
