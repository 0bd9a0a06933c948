import Foundation
import MajlisAudio
import Testing

@Suite struct CodecTests {
    @Test func opusCarriesAToneAtItsLevel() throws {
        let encoder = try OpusEncoder(bitrate: 32_000)
        #expect(encoder.bitrate == 32_000)
        let decoder = try OpusDecoder()
        var tone = ToneGenerator(frequency: 1_000, amplitude: 0.4)
        var decoded: [Int16] = []
        var original: [Int16] = []
        for _ in 0..<50 {
            let frame = tone.next()
            original += frame
            let packet = try encoder.encode(frame)
            #expect(packet.count > 10 && packet.count < 200)
            decoded += try decoder.decode(packet)
        }
        #expect(decoded.count == original.count)
        let settled = Array(decoded.suffix(24_000))
        #expect(ToneDetector.strongest(of: [440, 1_000, 2_500, 3_000], in: settled) == 1_000)
        #expect(abs(LevelMeter.dBov(settled) - LevelMeter.dBov(Array(original.suffix(24_000)))) < 1.5)
    }

    @Test func lossIsConcealedAndFECRecoversTheFrameBefore() throws {
        let encoder = try OpusEncoder(bitrate: 32_000)
        try encoder.setFEC(true, expectedLossPercent: 20)
        #expect(encoder.fecEnabled)
        let decoder = try OpusDecoder()
        var tone = ToneGenerator(frequency: 600, amplitude: 0.4)
        let packets = try (0..<30).map { _ in try encoder.encode(tone.next()) }
        for packet in packets.prefix(20) { _ = try decoder.decode(packet) }
        // Packet 20 is lost: recover it from the FEC in packet 21, then play 21.
        let recovered = try decoder.recover(from: packets[21])
        #expect(recovered.count == AudioFormat.frameSamples)
        #expect(ToneDetector.strongest(of: [300, 600, 1_200], in: recovered) == 600)
        _ = try decoder.decode(packets[21])
        // Packet 22 is lost with nothing after it yet: conceal.
        let concealed = try decoder.conceal()
        #expect(concealed.count == AudioFormat.frameSamples)
        #expect(LevelMeter.dBov(concealed) > -40)
    }

    @Test func wrongFrameSizeIsAnError() throws {
        let encoder = try OpusEncoder()
        #expect(throws: AudioError.self) { try encoder.encode([Int16](repeating: 0, count: 100)) }
        let decoder = try OpusDecoder()
        #expect(throws: AudioError.self) { try decoder.decode([0xFF, 0xFF, 0xFF]) }
    }
}

@Suite struct DSPTests {
    @Test func levelsInDBov() {
        #expect(LevelMeter.dBov([Int16](repeating: 0, count: 960)) == -127)
        #expect(LevelMeter.audioLevel([Int16](repeating: 0, count: 960)) == 127)
        let square = (0..<960).map { $0 % 2 == 0 ? Int16(32767) : Int16(-32768) }
        #expect(abs(LevelMeter.dBov(square)) < 0.01)
        #expect(LevelMeter.audioLevel(square) == 0)
        var tone = ToneGenerator(frequency: 1_000, amplitude: 0.5)
        let sine = tone.next(48_000)
        #expect(abs(LevelMeter.dBov(sine) - (-9.03)) < 0.05)  // A/sqrt(2) at A = 0.5
        #expect(LevelMeter.audioLevel(sine) == 9)
        #expect(LevelMeter.percent(sine) == 87)
    }

    @Test func resamplingKeepsPitchAndLength() throws {
        // A 44.1 kHz stereo file of a 1 kHz tone (left) and silence (right).
        var tone = ToneGenerator(frequency: 1_000, amplitude: 0.6, sampleRate: 44_100)
        let left = tone.next(44_100)
        var interleaved: [Int16] = []
        for sample in left { interleaved += [sample, 0] }
        let source = PCMBuffer(sampleRate: 44_100, channels: 2, int16: interleaved)
        let converted = try Resampler.toTransportFormat(source)
        #expect(converted.sampleRate == 48_000 && converted.channels == 1)
        #expect(abs(converted.frameCount - 48_000) < 100)
        let pcm = converted.int16
        #expect(ToneDetector.strongest(of: [900, 1_000, 1_100, 1_088], in: pcm) == 1_000)
        // Averaging with a silent channel halves the amplitude: -6 dB.
        #expect(abs(LevelMeter.dBov(pcm) - (LevelMeter.dBov(left) - 6.02)) < 0.3)
    }

    @Test func mixingNeverClipsAndRecovers() {
        var mixer = Mixer()
        var a = ToneGenerator(frequency: 300, amplitude: 0.9)
        var b = ToneGenerator(frequency: 300, amplitude: 0.9)
        let loud = mixer.mix([a.next(), b.next()])
        #expect(loud.allSatisfy { $0 > -32768 })
        #expect(mixer.gain < 0.6)
        // Quiet speech afterwards: the gain climbs back toward 1.
        var quiet = ToneGenerator(frequency: 500, amplitude: 0.1)
        for _ in 0..<100 { _ = mixer.mix([quiet.next()]) }
        #expect(mixer.gain > 0.99)
        // Two quiet speakers: the mix is the plain sum.
        var fresh = Mixer()
        let x: [Int16] = [100, -200, 300]
        let y: [Int16] = [1, 2, -3]
        #expect(fresh.mix([x, y]) == [101, -198, 297])
        #expect(fresh.mix([]) == [])
    }
}

@Suite struct WAVTests {
    func header(format: UInt16, channels: UInt16, rate: UInt32, bits: UInt16, data: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = Array("RIFF".utf8)
        func put32(_ v: UInt32) { bytes += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
        func put16(_ v: UInt16) { bytes += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        put32(UInt32(36 + data.count))
        bytes += Array("WAVEfmt ".utf8)
        put32(16); put16(format); put16(channels); put32(rate)
        put32(rate * UInt32(channels) * UInt32(bits / 8)); put16(channels * bits / 8); put16(bits)
        bytes += Array("LIST".utf8); put32(4); bytes += Array("INFO".utf8)  // a chunk to skip
        bytes += Array("data".utf8); put32(UInt32(data.count))
        return bytes + data
    }

    func file(_ bytes: [UInt8]) -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-\(UUID().uuidString).wav").path
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        return path
    }

    @Test func roundTrip() throws {
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3)
        let buffer = PCMBuffer(sampleRate: 48_000, channels: 1, int16: tone.next(4_800))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-\(UUID().uuidString).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try WAVFile.write(buffer, to: path)
        let back = try WAVFile.read(path)
        #expect(back == buffer)
    }

    @Test func readsEveryCommonSampleFormat() throws {
        let float: [UInt8] = [Float(0.5), Float(-0.25)].flatMap { value -> [UInt8] in
            let bits = value.bitPattern
            return [UInt8(bits & 0xFF), UInt8(bits >> 8 & 0xFF), UInt8(bits >> 16 & 0xFF), UInt8(bits >> 24)]
        }
        let cases: [([UInt8], [Float], Int)] = [
            (header(format: 3, channels: 2, rate: 44_100, bits: 32, data: float), [0.5, -0.25], 2),
            (header(format: 1, channels: 1, rate: 8_000, bits: 8, data: [128, 255, 0]), [0, 127.0 / 128, -1], 1),
            (header(format: 1, channels: 1, rate: 16_000, bits: 24, data: [0, 0, 0x40, 0, 0, 0xC0]), [0.5, -0.5], 1),
            (header(format: 1, channels: 1, rate: 22_050, bits: 16, data: [0x00, 0x40, 0x00, 0xC0]), [0.5, -0.5], 1),
        ]
        for (bytes, expected, channels) in cases {
            let path = file(bytes)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let buffer = try WAVFile.read(path)
            #expect(buffer.samples == expected)
            #expect(buffer.channels == channels)
        }
    }

    @Test func badAndTruncatedFilesAreErrorsNotCrashes() throws {
        let good = header(format: 1, channels: 1, rate: 48_000, bits: 16, data: [1, 2, 3, 4])
        #expect(throws: AudioError.self) { try WAVFile.read("/nonexistent.wav") }
        #expect(throws: AudioError.self) { try WAVFile.read(file(Array("not a wav file at all".utf8))) }
        #expect(throws: AudioError.self) { try WAVFile.read(file(header(format: 2, channels: 1, rate: 48_000, bits: 4, data: [1]))) }
        #expect(throws: AudioError.self) { try WAVFile.read(file(header(format: 1, channels: 0, rate: 48_000, bits: 16, data: [1, 2]))) }
        var generator = SystemRandomNumberGenerator()
        for length in 0..<good.count {
            let path = file(Array(good.prefix(length)))
            _ = try? WAVFile.read(path)
            try? FileManager.default.removeItem(atPath: path)
        }
        for _ in 0..<300 {
            var bytes = good
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            let path = file(bytes)
            _ = try? WAVFile.read(path)
            try? FileManager.default.removeItem(atPath: path)
        }
    }
}

@Suite struct JitterBufferTests {
    /// Plays `seconds` of a 50 packet/s stream through a buffer: packet i is sent at 20 i ms
    /// and arrives `delay(i)` later (nil: lost); one pop every 20 ms. Returns what each slot was.
    static func run(_ buffer: inout JitterBuffer, frames: Int, quiet: (Int) -> Bool = { _ in false }, delay: (Int) -> Double?) -> [JitterBuffer.Slot] {
        var arrivals: [(at: Double, index: Int)] = []
        for index in 0..<frames { if let late = delay(index) { arrivals.append((20 * Double(index) + late, index)) } }
        arrivals.sort { $0.at < $1.at }
        var slots: [JitterBuffer.Slot] = []
        var next = 0
        for tick in 0..<(frames + 100) {
            let now = 20 * Double(tick)
            while next < arrivals.count, arrivals[next].at <= now {
                let index = arrivals[next].index
                buffer.insert(sequence: UInt16(truncatingIfNeeded: 65_000 + index), timestamp: UInt32(truncatingIfNeeded: 4_294_000_000 + UInt64(index) * 960),
                              payload: [UInt8(index >> 8), UInt8(index & 0xFF)], quiet: quiet(index), at: now)
                next += 1
            }
            slots.append(buffer.pop(at: now))
        }
        return slots
    }

    /// The frames played, in order.
    static func played(_ slots: [JitterBuffer.Slot]) -> [Int] {
        slots.compactMap { if case .packet(let payload) = $0 { return Int(payload[0]) << 8 | Int(payload[1]) } else { return nil } }
    }

    /// One frame far later than all others (repaired on the way, unknown to the listener) raises
    /// the target by at most `largestStep`; a path that really got slower is still followed.
    @Test func oneFarLateFrameMovesTheTargetOnlyAStep() {
        let spike: (Int) -> Double? = { $0 == 60 ? 1_800 : 300 + Double($0 % 3) * 10 }
        var unlimited = JitterBuffer()
        _ = Self.run(&unlimited, frames: 100, delay: spike)
        #expect(unlimited.targetDelay() == 1_000, "one frame set the target to its maximum")
        var stepped = JitterBuffer()
        stepped.largestStep = 150
        _ = Self.run(&stepped, frames: 100, delay: spike)
        #expect(stepped.targetDelay() <= 200, "at \(stepped.targetDelay()) ms")
        var slower = JitterBuffer()
        slower.largestStep = 150
        _ = Self.run(&slower, frames: 300, delay: { $0 < 100 ? 300 : 800 })
        #expect(slower.targetDelay() >= 500, "at \(slower.targetDelay()) ms after four seconds 500 ms slower")
    }

    @Test func reordersRecoversAndConceals() {
        var buffer = JitterBuffer()
        #expect(buffer.pop(at: 0) == .waiting)
        // Frames 2 and 3 swap places; 5 is lost; everything wraps sequence and timestamp.
        let slots = Self.run(&buffer, frames: 10) { index in
            switch index {
            case 2: return 30
            case 5: return nil
            default: return 5
            }
        }
        #expect(Self.played(slots) == [0, 1, 2, 3, 4, 6, 7, 8, 9])
        #expect(slots.contains(.recover(next: [0, 6])))  // 5 recovered from 6's FEC
        #expect(slots.prefix(2).allSatisfy { $0 == .waiting })  // the target delay passes first
        // A frame for a slot already played is refused.
        let accepted = buffer.insert(sequence: 65_001, timestamp: 0, payload: [1], at: 5_000)
        #expect(!accepted)
    }

    @Test func theTargetFollowsTheJitter() {
        var clean = JitterBuffer()
        let calm = Self.run(&clean, frames: 500) { _ in 30 }
        #expect(clean.targetDelay() == clean.minimumDelay)
        #expect(calm.filter { $0 == .conceal }.count <= 3)

        // Up to 120 ms of jitter: the target grows to cover nearly every frame.
        var random = SystemRandomNumberGenerator()
        let delays = (0..<1_500).map { _ in Double.random(in: 0...120, using: &random) }
        var jittery = JitterBuffer()
        let slots = Self.run(&jittery, frames: 1_500) { delays[$0] }
        let target = jittery.targetDelay()
        #expect(target > 90 && target < 160, "target \(target)")
        let late = slots.suffix(1_100).prefix(1_000).filter { if case .packet = $0 { return false } else { return true } }.count
        #expect(late < 60, "\(late) of 1,000 slots had no frame")
        #expect(Self.played(slots).count > 1_400)
    }

    /// Repairs that arrive 700 ms late (a long path's retransmissions) teach the target nothing
    /// when the listener does not wait for them; measured, they would pull it to the maximum.
    @Test func unmeasuredRepairsLeaveTheTarget() {
        for measured in [false, true] {
            var buffer = JitterBuffer()
            for index in 0..<500 {
                let sent = 20 * Double(index)
                let timestamp = UInt32(index * 960)
                if index % 10 != 3 {
                    buffer.insert(sequence: UInt16(index), timestamp: timestamp, payload: [1], at: sent + 30)
                    _ = buffer.pop(at: sent + 30)
                }
                if index % 10 == 3 {
                    buffer.insert(sequence: UInt16(index), timestamp: timestamp, frames: [[1]], measured: measured, at: sent + 700)
                }
            }
            let target = buffer.targetDelay()
            if measured {
                #expect(target > 600, "repairs measured: \(target)")
            } else {
                #expect(target == buffer.minimumDelay, "repairs not measured: \(target)")
            }
        }
    }

    /// A few repairs among many frames (0.5% here: beyond the 99% quantile's reach) still set how
    /// deep playout is, the slowest of the last ten; thirty seconds after the last one, the
    /// jitter alone does again.
    @Test func playoutCoversTheLastRepairs() {
        for marked in [false, true] {
            var buffer = JitterBuffer()
            var now = 0.0
            for index in 0..<1_000 {
                let sent = 20 * Double(index)
                now = sent + 30
                if index % 200 == 50 {
                    buffer.insert(sequence: UInt16(index), timestamp: UInt32(index * 960), frames: [[1]], repair: marked, at: sent + 330)
                } else {
                    buffer.insert(sequence: UInt16(index), timestamp: UInt32(index * 960), payload: [1], at: now)
                }
                _ = buffer.pop(at: now)
            }
            if marked {
                #expect(buffer.targetDelay() >= 300, "repairs covered: \(buffer.targetDelay())")
                _ = buffer.pop(at: now + 30_500)
                #expect(buffer.targetDelay() < 100, "thirty seconds later: \(buffer.targetDelay())")
            } else {
                #expect(buffer.targetDelay() < 100, "the quantile alone passes over them: \(buffer.targetDelay())")
            }
        }
    }

    /// Where copies are not measured, the target is the packets' jitter plus the room a copy
    /// needs: a frame rebuilt from a copy four frames later plays 80 ms after its packet would.
    @Test func redundancyDelayLeavesRoomForCopies() {
        var buffer = JitterBuffer()
        _ = Self.run(&buffer, frames: 500) { index in Double(index % 10) * 10 }  // 0-90 ms of jitter
        let jitter = buffer.targetDelay()
        buffer.redundancyDelay = 80
        #expect(buffer.targetDelay() == jitter + 80)
        buffer.maximumDelay = jitter + 40
        #expect(buffer.targetDelay() == jitter + 40, "within the maximum")
    }

    @Test func catchesUpInPausesWhenTheDelayFalls() {
        // Up to 200 ms late for five seconds, then 20 ms: once the slow frames leave the 30 s
        // window, the buffer drops quiet frames to catch up.
        var buffer = JitterBuffer()
        let slots = Self.run(&buffer, frames: 3_000, quiet: { $0 % 25 < 8 }) { $0 < 250 ? 200 - Double($0 % 10) * 18 : 20 }
        let played = Set(Self.played(slots))
        let dropped = (0..<3_000).filter { !played.contains($0) }.count
        #expect(buffer.targetDelay() < 80)
        #expect(dropped > 0)
        // A spoken frame is never dropped to catch up while the delay is only moderately high.
        let spokenDropped = (250..<2_950).filter { $0 % 25 >= 8 && !played.contains($0) }
        #expect(spokenDropped.isEmpty, "dropped spoken frames \(spokenDropped.prefix(10))")
    }

    /// Plays a stream of spoken frames (never quiet) whose playout takes 20 ms a slot, or 15
    /// and 25 ms for a frame the buffer asks to play faster or slower (when `honoured`);
    /// `change` may set the buffer before each slot. Returns each played frame's lateness
    /// (played minus sent), and the slots.
    static func paced(
        _ buffer: inout JitterBuffer, frames: Int, honoured: Bool, change: (inout JitterBuffer, Double) -> Void = { _, _ in }, delay: (Int) -> Double
    ) -> (lateness: [Int: Double], slots: [JitterBuffer.Slot]) {
        let arrivals = (0..<frames).map { (at: 20 * Double($0) + delay($0), index: $0) }.sorted { $0.at < $1.at }
        var lateness: [Int: Double] = [:]
        var slots: [JitterBuffer.Slot] = []
        var next = 0
        var now = 0.0
        while now < 20 * Double(frames + 100) {
            while next < arrivals.count, arrivals[next].at <= now {
                let index = arrivals[next].index
                buffer.insert(sequence: UInt16(index), timestamp: UInt32(index * 960), payload: [UInt8(index >> 8), UInt8(index & 0xFF)], at: now)
                next += 1
            }
            change(&buffer, now)
            let slot = buffer.pop(at: now)
            slots.append(slot)
            var length = 20.0
            if case .packet(let payload) = slot {
                let index = Int(payload[0]) << 8 | Int(payload[1])
                lateness[index] = now - 20 * Double(index)
                if honoured { length += buffer.pace == .faster ? -5 : buffer.pace == .slower ? 5 : 0 }
            }
            now += length
        }
        return (lateness, slots)
    }

    /// A path whose delay falls from 400 to 20 ms while the speaker talks on without a pause:
    /// speech played a little faster drains the backlog down to 200 ms above the target (the
    /// rest waits for a pause); no frame is dropped for it.
    @Test func speechDrainsABacklogMidSentence() {
        var buffer = JitterBuffer()
        let run = Self.paced(&buffer, frames: 3_000, honoured: true) { $0 < 250 ? 400 - Double($0 % 10) * 38 : 20 }
        #expect(run.lateness.count == 3_000, "\(3_000 - run.lateness.count) frames not played")
        let end = run.lateness[2_999] ?? 0
        #expect(end < buffer.targetDelay() + 250, "plays \(end) ms late, target \(buffer.targetDelay())")
        #expect((run.lateness[200] ?? 0) > 350)
    }

    /// The target rises mid-sentence (the listener starts waiting for repairs: a minimum of
    /// 300 ms from the tenth second) while the speaker talks on without a pause: speech played
    /// a little slower takes playout there within a second and a half, without a gap; keeping
    /// the timing, it would wait for a pause that never comes.
    @Test func speechDeepensMidSentenceWhenTheTargetRises() {
        func run(honoured: Bool) -> [Int: Double] {
            var buffer = JitterBuffer()
            let run = Self.paced(&buffer, frames: 1_500, honoured: honoured, change: { buffer, now in
                if now >= 10_000 { buffer.minimumDelay = 300 }
            }) { _ in 20 }
            // Nothing but frames from the first to the last.
            let speech = run.slots.drop { $0 == .waiting }.prefix(1_500)
            #expect(speech.allSatisfy { if case .packet = $0 { true } else { false } })
            return run.lateness
        }
        let pacing = run(honoured: true)
        let keeping = run(honoured: false)
        #expect(pacing.count == 1_500 && keeping.count == 1_500)
        // Within 100 ms of the target (and 20 ms of transit): the rest waits for a pause.
        #expect((pacing[575] ?? 0) >= 220, "\(pacing[575] ?? 0) ms late")
        #expect((keeping[1_499] ?? 0) < 100)
    }

    @Test func aStreamThatJumpsAheadIsFollowed() {
        // A network cut: 500 frames never arrive, then the stream goes on from there.
        var buffer = JitterBuffer()
        let slots = Self.run(&buffer, frames: 700) { $0 >= 100 && $0 < 600 ? nil : 5 }
        let played = Self.played(slots)
        #expect(played.filter { $0 >= 600 }.count >= 95, "after the gap: \(played.filter { $0 >= 600 }.count) frames played")
    }

    @Test func aPauseInSpeechIsNotALoss() {
        // The speaker stops for a second (no packets, the timestamp runs on) and resumes with
        // the next sequence number: nothing it sends after the pause is thrown away.
        var buffer = JitterBuffer()
        var slots: [JitterBuffer.Slot] = []
        for tick in 0..<200 {
            let now = 20 * Double(tick)
            if tick < 50 || tick >= 100 {
                let index = tick < 50 ? tick : tick - 50
                buffer.insert(sequence: UInt16(index), timestamp: UInt32(tick * 960), payload: [0, UInt8(index)], at: now + 1)
            }
            slots.append(buffer.pop(at: now + 1))
        }
        #expect(Self.played(slots).count >= 145)
        #expect(slots[60...90].allSatisfy { $0 == .conceal || $0 == .waiting })
    }
}

@Suite struct MultiFramePacketTests {
    /// Three 20 ms frames encoded apart, joined into one packet, split again: the same frames.
    @Test func framesJoinAndSplitBack() throws {
        let encoder = try OpusEncoder(bitrate: 24_000)
        var tone = ToneGenerator(frequency: 440, amplitude: 0.3)
        let frames = try (0..<3).map { _ in try encoder.encode(tone.next()) }
        let joined = try #require(OpusFrames.join(frames))
        #expect(OpusFrames.count(joined) == 3)
        #expect(joined.count < frames.map(\.count).reduce(0, +) + 4)
        #expect(OpusFrames.split(joined) == frames)
        #expect(OpusFrames.split(frames[0]) == [frames[0]])
        #expect(OpusFrames.split([]) == nil && OpusFrames.count([]) == nil)
        // Frames of different modes cannot share a packet: they travel in runs that can.
        let other = try OpusEncoder(bitrate: 64_000)
        var loud = ToneGenerator(frequency: 3_000, amplitude: 0.5)
        let music = try (0..<5).map { _ in try other.encode(loud.next()) }.last!
        let mixed = [frames[0], frames[1], music, frames[2]]
        if music[0] & 0xFC != frames[0][0] & 0xFC {
            let runs = OpusFrames.joinRuns(mixed)
            #expect(runs.count == 3)
            #expect(runs.flatMap { OpusFrames.split($0) ?? [] } == mixed)
        }
    }

    /// Packets of three frames play one frame per slot, in order; a lost one is three slots,
    /// the last of them recovered from the next packet's FEC.
    @Test func aPacketOfThreeFramesPlaysThreeSlots() {
        var buffer = JitterBuffer()
        var slots: [JitterBuffer.Slot] = []
        for tick in 0..<60 {
            let now = 20 * Double(tick)
            if tick % 3 == 2, tick / 3 < 15 {
                let packet = tick / 3
                if packet != 6 {
                    let frames = (0..<3).map { [UInt8(packet), UInt8($0)] }
                    buffer.insert(sequence: UInt16(packet), timestamp: UInt32(packet * 2_880), frames: frames, at: now + 5)
                }
            }
            slots.append(buffer.pop(at: now + 5))
        }
        let played = slots.compactMap { slot -> [UInt8]? in if case .packet(let payload) = slot { return payload } else { return nil } }
        let expected = (0..<15).filter { $0 != 6 }.flatMap { packet in (0..<3).map { [UInt8(packet), UInt8($0)] } }
        #expect(played == expected)
        let missing = slots.firstIndex { $0 == .recover(next: [7, 0]) }
        #expect(missing != nil, "the lost packet's last frame comes from the next one's FEC")
        if let missing { #expect(slots[missing - 2] == .conceal && slots[missing - 1] == .conceal) }
    }
}

@Suite struct GainTests {
    @Test func volumeFromZeroToFourHundred() {
        let samples: [Int16] = [1000, -1000, 20_000]
        #expect(Gain.apply(100, to: samples) == samples)
        #expect(Gain.apply(0, to: samples) == [0, 0, 0])
        #expect(Gain.apply(50, to: samples) == [500, -500, 10_000])
        #expect(Gain.apply(400, to: samples) == [4000, -4000, 32_767])  // clipped, never wrapped
        #expect(Gain.apply(900, to: samples) == Gain.apply(400, to: samples))
        #expect(Gain.apply(-5, to: samples) == [0, 0, 0])
    }
}
