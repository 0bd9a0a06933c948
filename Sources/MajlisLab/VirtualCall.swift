#if os(Linux)
import MajlisAudio
import MajlisForwarding
import MajlisKit
import MajlisProtocol
import MajlisTransport

/// A call on virtual time: a speaker's and a listener's `MediaClientCore` (the whole audio path:
/// pipeline, uplink, downlink, spatial sound) and the server's `MediaRouterCore`, every leg (each client's uplink and downlink) through its own
/// `PathImpairment`, as `majlis netsim` impairs them. Nothing waits for a clock, so a call of
/// fifteen seconds takes a fraction of a second of CPU, and a seed repeats it exactly: many
/// seeds of a condition can be run to find the rare call that goes wrong, and its trace kept.
///
/// What it leaves out is the machine: the real engine's threads wake a little late under load
/// and its packets wait for a core; those are the real-time trials' (`SpeechTrial`) to catch.
public struct VirtualCall: Sendable {
    /// Everything the listener played, from the call's start.
    public let heard: [Int16]
    /// Where the speech starts in `heard` (an index: the speaker started it then).
    public let speechStart: Int
    /// How long after it was spoken the listener played the speech (best alignment), ms.
    public let mouthToEar: Double?
    public let speaker: LiveMediaEngine.Statistics
    public let listener: LiveMediaEngine.Statistics
    /// Both ends' statistics every 100 ms of the call.
    public let trace: [Sample]
    /// Packets relayed and dropped toward the server (up) and toward clients (down).
    public let relayed: (up: NetworkSimulator.Counts, down: NetworkSimulator.Counts)

    public struct Sample: Sendable {
        public let time: Double
        public let speaker: LiveMediaEngine.Statistics
        public let listener: LiveMediaEngine.Statistics
    }

    /// The share of packets the network dropped (both directions).
    public var networkLoss: Double {
        let up = Double(relayed.up.lost) / Double(max(1, relayed.up.sent + relayed.up.lost))
        let down = Double(relayed.down.lost) / Double(max(1, relayed.down.sent + relayed.down.lost))
        return 1 - (1 - up) * (1 - down)
    }

    /// The listener's recording from where the speech starts, as long as `speech` plus a second.
    public func heardSpeech(length: Int) -> [Int16] {
        Array(heard[min(speechStart, heard.count)..<min(heard.count, speechStart + length + AudioFormat.sampleRate)])
    }

    private struct Datagram {
        var at: Double
        var order: Int
        var bytes: [UInt8]
        /// Nil: to the server, from `from`; else to that client.
        var to: UDPAddress?
        var from: UDPAddress
    }

    /// One client's two legs: toward the server and back (nil: clean).
    private struct Legs {
        var up: PathImpairment?
        var down: PathImpairment?
    }

    private struct Output: RouterOutput {
        var sent: [(bytes: [UInt8], to: UDPAddress)] = []
        private var copies = 0
        mutating func send(_ bytes: [UInt8], to address: UDPAddress) { sent.append((bytes, address)) }
        mutating func forward(to address: UDPAddress, _ fill: (UnsafeMutableRawBufferPointer) -> Int?) {
            var slot = [UInt8](repeating: 0, count: 1_500)
            guard let length = slot.withUnsafeMutableBytes({ fill($0) }) else { return }
            sent.append((Array(slot.prefix(length)), address))
            copies += 1
        }
        mutating func flush() -> Int {
            defer { copies = 0 }
            return copies
        }
    }

    /// Runs one call: both join at once and the speaker is seated; after `warmUp` seconds, once
    /// both ends are bound (at most a minute), the speaker says `speech`; the call ends `tail`
    /// seconds after it. With no `warmUp` the call starts cold: the listener is in the call
    /// first, and once it is bound the speaker joins, is seated and starts its recording at once
    /// (which, as a recording does, waits while the speaker's path is not bound).
    /// `impairment` is applied to each leg (nil: a clean path), its seed making the run. The
    /// listener plays in `listenerChannels` (2: `heard` is interleaved stereo) with `listener`'s
    /// settings (an effect, spatial sound, taps: the speaker's SSRC is 1001).
    public static func run(
        _ speech: [Int16], impairment: NetworkSimulator.Settings?, warmUp: Double = 3, tail: Double = 2.5, listener: [MediaCommand] = [],
        listenerChannels: Int = 1
    ) throws -> VirtualCall {
        let server = UDPAddress(host: "127.0.0.1", port: 40_000)!
        let speakerAddress = UDPAddress(host: "127.0.0.1", port: 40_001)!
        let listenerAddress = UDPAddress(host: "127.0.0.1", port: 40_002)!
        let seed = impairment?.seed ?? 1
        var random = SplitMix64(seed: seed)
        func key() -> [UInt8] { (0..<SRTPSession.keyLength).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        let router = MediaRouterCore(challenge: BindingChallenge(secret: key()))
        let speakerKey = key()
        let listenerKey = key()
        router.apply(.join(room: "lab", user: "speaker", ssrc: 1_001, key: speakerKey))
        router.apply(.join(room: "lab", user: "listener", ssrc: 1_002, key: listenerKey))
        router.apply(.setSpeakers(room: "lab", seats: ["speaker": 0]))
        let talker = try MediaClientCore(sequence: UInt16(truncatingIfNeeded: random.next()), timestamp: UInt32(truncatingIfNeeded: random.next()))
        let hearer = try MediaClientCore(
            playbackChannels: listenerChannels, sequence: UInt16(truncatingIfNeeded: random.next()), timestamp: UInt32(truncatingIfNeeded: random.next()))
        listener.forEach(hearer.apply)
        // Each client's flow gets two impairments of its own, seeded one after the other as the
        // simulator seeds them.
        var nextSeed = seed
        func leg() -> PathImpairment? {
            guard let impairment else { return nil }
            nextSeed &+= 1
            return PathImpairment(
                loss: impairment.loss, meanBurst: impairment.meanBurst, delay: impairment.delay, jitter: impairment.jitter, reorder: impairment.reorder,
                seed: nextSeed, rate: impairment.rate, queueLimit: impairment.queue)
        }
        var legs: [UDPAddress: Legs] = [:]
        for address in [speakerAddress, listenerAddress] { legs[address] = Legs(up: leg(), down: leg()) }
        var counts = (up: NetworkSimulator.Counts(), down: NetworkSimulator.Counts())

        var queue: [Datagram] = []
        var order = 0
        /// When a datagram crossing `direction` of `client`'s legs arrives, or nil if lost.
        /// When a datagram crossing `direction` of `client`'s legs arrives (nil if lost), and
        /// whether a full queue dropped it.
        func release(_ direction: WritableKeyPath<Legs, PathImpairment?>, of client: UDPAddress, bytes: Int, at now: Double) -> (at: Double?, queueDrop: Bool) {
            guard var path = legs[client]?[keyPath: direction] else { return (now, false) }
            defer { legs[client]?[keyPath: direction] = path }
            let drops = path.queueDrops
            return (path.release(at: now, bytes: bytes), path.queueDrops > drops)
        }
        func post(_ bytes: [UInt8], from: UDPAddress, to: UDPAddress?, at now: Double) {
            let (released, queueDrop) = release(to == nil ? \.up : \.down, of: to ?? from, bytes: bytes.count, at: now)
            let counted: WritableKeyPath<(up: NetworkSimulator.Counts, down: NetworkSimulator.Counts), NetworkSimulator.Counts> = to == nil ? \.up : \.down
            if released == nil {
                counts[keyPath: counted].lost += 1
                if queueDrop { counts[keyPath: counted].queueDrops += 1 }
            } else {
                counts[keyPath: counted].sent += 1
            }
            guard let released else { return }
            order += 1
            let datagram = Datagram(at: released, order: order, bytes: bytes, to: to, from: from)
            let index = queue.firstIndex { ($0.at, $0.order) > (released, order) } ?? queue.endIndex
            queue.insert(datagram, at: index)
        }

        let settings = [
            (talker, speakerAddress, MediaSettings(server: server, ssrc: 1_001, key: speakerKey)),
            (hearer, listenerAddress, MediaSettings(server: server, ssrc: 1_002, key: listenerKey)),
        ]
        let cold = warmUp <= 0
        for (core, address, media) in settings where !(cold && core === talker) {
            for bytes in try core.configure(media, now: 0) { post(bytes, from: address, to: nil, at: 0) }
        }
        talker.apply(.publish(true))
        var talkerJoined = !cold

        let frame = AudioFormat.frameSamples
        let warmUpTicks = Int((warmUp * 1000 / Double(AudioFormat.frameMilliseconds)).rounded())
        let speechTicks = (speech.count + frame - 1) / frame
        // The speech starts once the call has settled and both ends are bound (as a
        // `SpeechTrial` starts it), or cold as soon as the speaker is in; the call ends `tail`
        // after it. It is read as a recording is: only while the speaker's path is bound.
        var speechStartTick: Int?
        var spoken = 0
        var totalTicks = Int.max
        // The two clients' clocks tick out of step with each other and with the server's timers.
        let speakerPhase = 3.0
        let listenerPhase = 11.0
        var heard: [Int16] = []
        var trace: [Sample] = []
        var nextOverdue = 0.0
        var nextTick = 250.0
        var nextReport = 1_000.0
        var nextSample = 100.0
        var speakerTick = 0
        var listenerTick = 0
        var buffer = [UInt8](repeating: 0, count: 2_048)
        while listenerTick < totalTicks, listenerTick < 60_000 / AudioFormat.frameMilliseconds + warmUpTicks + speechTicks {
            let speakerAt = Double(speakerTick * AudioFormat.frameMilliseconds) + speakerPhase
            let listenerAt = Double(listenerTick * AudioFormat.frameMilliseconds) + listenerPhase
            let timerAt = min(nextOverdue, nextTick, nextReport, nextSample)
            let packetAt = queue.first?.at ?? .infinity
            let now = min(speakerAt, listenerAt, timerAt, packetAt)
            if packetAt == now {
                let datagram = queue.removeFirst()
                if let to = datagram.to {
                    let core = to == speakerAddress ? talker : hearer
                    for bytes in core.receive(datagram.bytes, now: now) { post(bytes, from: to, to: nil, at: now) }
                } else {
                    var output = Output()
                    buffer.replaceSubrange(0..<datagram.bytes.count, with: datagram.bytes)
                    router.receive(&buffer, length: datagram.bytes.count, from: datagram.from, now: now, output: &output)
                    for (bytes, to) in output.sent { post(bytes, from: server, to: to, at: now) }
                }
            } else if speakerAt == now {
                if !talkerJoined, hearer.isBound {
                    talkerJoined = true
                    for bytes in try talker.configure(settings[0].2, now: now) { post(bytes, from: speakerAddress, to: nil, at: now) }
                }
                let due = cold ? talkerJoined : speakerTick >= warmUpTicks && hearer.isBound
                let reading = talkerJoined && talker.isBound
                if speechStartTick == nil, due, reading { speechStartTick = speakerTick }
                var microphone: [Int16]?
                if reading {
                    var samples = [Int16](repeating: 0, count: frame)
                    if speechStartTick != nil, spoken < speech.count {
                        let part = speech[spoken..<min(speech.count, spoken + frame)]
                        samples.replaceSubrange(0..<part.count, with: part)
                        spoken += frame
                    }
                    microphone = samples
                }
                // The call ends `tail` after the speech, however long the speaker's path was unbound.
                if speechStartTick != nil, spoken < speech.count || totalTicks == .max {
                    let left = (speech.count - min(spoken, speech.count) + frame - 1) / frame
                    totalTicks = speakerTick + left + Int(tail * 1000) / AudioFormat.frameMilliseconds
                }
                let tick = talker.tick(now: now, microphone: microphone)
                for bytes in tick.datagrams { post(bytes, from: speakerAddress, to: nil, at: now) }
                speakerTick += 1
            } else if listenerAt == now {
                let tick = hearer.tick(now: now, microphone: nil)
                for bytes in tick.datagrams { post(bytes, from: listenerAddress, to: nil, at: now) }
                heard += tick.playout
                listenerTick += 1
            } else {
                var output = Output()
                if nextOverdue == now {
                    router.askOverdue(now: now, output: &output)
                    nextOverdue += 10
                }
                if nextTick == now {
                    router.tick(now: now, output: &output)
                    _ = router.takeLevels(top: 5)
                    nextTick += 250
                }
                if nextReport == now {
                    router.sendReports(now: now, output: &output)
                    _ = router.takeQuality()
                    nextReport += 1_000
                }
                if nextSample == now {
                    trace.append(Sample(time: now, speaker: talker.statistics, listener: hearer.statistics))
                    nextSample += 100
                }
                for (bytes, to) in output.sent { post(bytes, from: server, to: to, at: now) }
            }
        }
        // The listener's clock started `listenerPhase - speakerPhase` after the speaker's.
        let speechStart = ((speechStartTick ?? 0) * frame - Int((listenerPhase - speakerPhase) * 48)) * listenerChannels
        let delay = listenerChannels == 1 ? SpeechDelay.milliseconds(spoken: speech, heard: Array(heard[max(0, speechStart)...])) : nil
        return VirtualCall(
            heard: heard, speechStart: max(0, speechStart), mouthToEar: delay, speaker: talker.statistics, listener: hearer.statistics, trace: trace,
            relayed: counts)
    }
}
#endif
