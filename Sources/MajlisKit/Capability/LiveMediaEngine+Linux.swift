#if os(Linux)
import Foundation
import MajlisAudio
import MajlisProtocol
import MajlisTransport

/// The media capability over the Majlis media plane (docs/protocol.md section 12): binds its UDP
/// address with STUN, sends the microphone as Opus in SRTP every 20 ms while it may publish, and
/// plays what it hears (an adaptive jitter buffer and Opus decoder per speaker, mixed) into a sink.
///
/// On a lossy network it protects what it sends as the server's receiver reports say it must
/// (`ProtectionPolicy`: Opus FEC, RED, bitrate, and frames per packet under what the server says
/// its uplink carries), answers NACKs from a cache of what it sent, and
/// asks the server for what it missed. It rebinds (a new socket, a new binding) when the network
/// changes (`networkChanged()`) or when a bound path hears nothing from the server for three
/// seconds; until a binding is answered it is sent four times a second.
///
/// The media plane itself is `MediaClientCore` (no I/O); this engine hosts it on a UDP socket
/// and a paced clock, on one thread of its own: every 20 ms a tick (microphone in, datagrams and
/// sound out), and between ticks whatever arrives. `stop()` returns once that thread has ended,
/// so an engine stopped and configured again never runs two. The core is behind `lock`.
public final class LiveMediaEngine: MediaEngine, @unchecked Sendable {
    // Audited: `core`, `socket`, `running` and `ended` are used under `lock` only; `source` and
    // `sink` on the engine's thread only, but for their `latency` (read from any thread).
    /// What the engine counted since it started.
    public struct Statistics: Sendable, Equatable {
        public var sent = 0
        public var retransmitted = 0
        public var nacksSent = 0
        public var recoveredByRedundancy = 0
        public var repairedByRetransmission = 0
        /// Playout slots of everything heard: frames played, recovered from FEC, concealed.
        public var played = 0
        public var recoveredByFEC = 0
        public var concealed = 0
        /// Frames played a pitch period shorter or longer to follow the target delay in speech.
        public var accelerated = 0
        public var stretched = 0
        /// Frames that arrived too late to play.
        public var late = 0
        /// The playout delay the jitter buffers aim for now (the largest), milliseconds.
        public var targetDelay: Double = 0
        public var rebinds = 0
        /// Round trip to the server measured with bindings, milliseconds.
        public var roundTrip: Double?
        /// The protection in use: FEC, earlier frames per packet, bitrate.
        public var fec = false
        public var redundancy = 0
        public var bitrate = 0
        /// 20 ms frames in each packet sent, and what the server last said the uplink carries
        /// (bits per second with headers; nil: no limit).
        public var framesPerPacket = 1
        public var uplinkCapacity: Int?
        /// Frames not sent because they were silence (Opus DTX), and every datagram sent
        /// (media, retransmissions, reports, bindings) with its bytes (without IP and UDP headers).
        public var silentFrames = 0
        public var datagramsSent = 0
        public var bytesSent = 0
    }

    private let source: any AudioSource
    /// The voice pipeline (processing, effect, music, monitoring), on the engine's thread; what
    /// is asked of it waits in the `pending` values (under `lock`) for the next tick.
    private let pipeline: VoicePipeline
    private var pendingProcessing: VoiceProcessing?
    private var pendingEffect: VoiceEffect?
    private var pendingTracks: [MusicTrack] = []
    private var pendingMonitor: Int?
    /// Spatial sound: what was asked (nil: nothing new; .some(nil): off), and the renderer (on
    /// the engine's thread; made when first asked for, nil while off or without a stereo sink).
    private var pendingSpatial: [UInt32: SpatialPosition]??
    private var spatializer: Spatializer?
    private var hrtf: HRTF?
    /// Taps asked for since the last tick (nil: removed), and the speakers' taps in force.
    private var pendingTaps: [AudioTapPoint: (any AudioTap)?] = [:]
    private var speakerTaps: [UInt32: any AudioTap] = [:]
    /// Whether `source` goes on by itself (a device) rather than waiting to be read (a file).
    private let live: Bool
    private let sink: any AudioSink
    private let lock = NSLock()
    private let core: MediaClientCore
    private var socket: UDPSocket
    private var running = false
    /// Signalled when the engine's thread has ended (nil while none runs).
    private var ended: DispatchSemaphore?
    private let logger: Logger

    /// An engine reading `source` and playing into `sink`; `processing` on the microphone
    /// (`.standard` where a microphone and a speaker share a room; off for a file or a tone);
    /// `profile` speech, music (Opus's general audio mode, full band, 64 kb/s) or stereo music
    /// (the same in two channels, 96 kb/s: stereo music tracks are sent as they are); `bitrate`
    /// overrides the profile's. A speaker who sends stereo is played in stereo to a stereo sink.
    public init(
        source: any AudioSource, sink: any AudioSink, bitrate: Int? = nil, profile: AudioProfile = .speech,
        processing: VoiceProcessing = .off, effect: VoiceEffect = .none, logger: Logger = .silent
    ) throws(MajlisError) {
        self.source = source
        live = source.isLive
        self.sink = sink
        self.logger = logger
        do {
            socket = try Self.makeSocket()
            core = try MediaClientCore(bitrate: bitrate, profile: profile, logger: logger)
            pipeline = try VoicePipeline(processing: processing, effect: effect)
            pipeline.sendChannels = profile.channels
        } catch {
            throw MajlisError.misuse("cannot start media: \(error)")
        }
    }

    private static func makeSocket() throws(MediaError) -> UDPSocket {
        try UDPSocket(host: "0.0.0.0", port: 0, receiveTimeoutMilliseconds: 100)
    }

    private func withCore<T>(_ body: (MediaClientCore) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(core)
    }

    /// Whether the server answered the binding.
    public var isBound: Bool { withCore { $0.isBound } }

    /// The local UDP port media uses now.
    public var localPort: Int { withCore { _ in socket.port } }

    /// What the engine counted.
    public var statistics: Statistics { withCore { $0.statistics } }

    public var deviceLatency: Double { source.latency + sink.latency }

    // MARK: MediaEngine

    public func configure(_ media: JSONValue?) async {
        guard let settings = MediaSettings(media) else {
            logger.warning("the room gave no usable media settings")
            return
        }
        let now = MonotonicClock.milliseconds()
        let started = withCore { core -> (datagrams: [[UInt8]], thread: DispatchSemaphore?)? in
            // The same settings again (a resync): keep the sessions, the binding and what each
            // speaker's buffer learned.
            if running && core.isConfigured(for: settings) { return ([], nil) }
            guard let datagrams = try? core.configure(settings, now: now) else { return nil }
            defer { running = true }
            guard !running else { return (datagrams, nil) }
            let done = DispatchSemaphore(value: 0)
            ended = done
            return (datagrams, done)
        }
        guard let started else {
            logger.warning("the room's media key is unusable")
            return
        }
        send(started.datagrams)
        if let done = started.thread {
            Thread.detachNewThread {
                ThreadName.set("majlis-voice")
                self.serve()
                done.signal()
            }
        }
    }

    public func setPublishing(_ publishing: Bool) async { withCore { $0.publishing = publishing } }

    public func setCaptureVolume(_ volume: Int) async { withCore { $0.captureVolume = volume } }

    public func setPlaybackVolume(_ volume: Int) async { withCore { $0.playbackVolume = volume } }

    public func setRemoteMuted(ssrc: UInt32, muted: Bool) async {
        withCore { core in
            if muted { core.mutedRemotes.insert(ssrc) } else { core.mutedRemotes.remove(ssrc) }
        }
    }

    public func setRemoteVolume(ssrc: UInt32, volume: Int) async {
        withCore { $0.remoteVolumes[ssrc] = volume == 100 ? nil : min(400, max(0, volume)) }
    }

    public func setVoiceProcessing(_ processing: VoiceProcessing) async { withCore { _ in pendingProcessing = processing } }

    public func setVoiceEffect(_ effect: VoiceEffect) async { withCore { _ in pendingEffect = effect } }

    /// Plays music or a sound effect: from the start, `loops` times (0: until stopped), into what
    /// the room hears while the user may be heard (`.room`, and played here too) or only here
    /// (`.local`). Pause, resume, seek, stop and volumes are the track's own.
    public func play(_ track: MusicTrack, loops: Int = 1, destination: MusicTrack.Destination = .room) {
        track.play(loops: loops, destination: destination)
        withCore { _ in pendingTracks.append(track) }
    }

    public func setSpatialSound(_ positions: [UInt32: SpatialPosition]?) async {
        withCore { _ in pendingSpatial = .some(positions) }
    }

    /// Puts `tap` at `point` (nil: removes the one there), from the next frame on. A speaker's
    /// tap sees that speaker's voice before it is mixed (changes to it are not heard).
    public func setTap(_ tap: (any AudioTap)?, at point: AudioTapPoint) {
        withCore { _ in pendingTaps[point] = .some(tap) }
    }

    /// In-ear monitoring: the user hears their own voice, processed and with its effect, at
    /// `volume` (0...400; 0 off). Meant for headphones: from a speaker it would be heard twice.
    public func setInEarMonitoring(volume: Int) {
        withCore { _ in pendingMonitor = min(Gain.range.upperBound, max(0, volume)) }
    }

    /// Stops sending and playing; returns once the engine's thread has ended.
    public func stop() async {
        let thread = withCore { _ -> DispatchSemaphore? in
            running = false
            defer { ended = nil }
            return ended
        }
        guard let thread else { return }
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                thread.wait()
                finished.resume()
            }
        }
    }

    /// The device moved to another network (or its address may have changed): media continues
    /// from a new socket, bound again at once.
    public func networkChanged() {
        guard let fresh = try? Self.makeSocket() else {
            logger.warning("cannot open a new media socket")
            return
        }
        let datagrams = withCore { core in
            socket = fresh  // the engine's thread lets go of the old one after its next wait
            return core.rebind(reason: "the network changed", now: MonotonicClock.milliseconds())
        }
        send(datagrams)
    }

    // MARK: Threads

    private func send(_ datagrams: [[UInt8]]) {
        guard !datagrams.isEmpty else { return }
        let (socket, server) = withCore { core in (self.socket, core.server) }
        guard let server else { return }
        for bytes in datagrams { socket.send(bytes, to: server) }
    }

    /// The engine's thread: a tick every 20 ms, and until each one, what arrives.
    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        var next = MonotonicClock.milliseconds()
        while withCore({ _ in self.running }) {
            let wait = next - MonotonicClock.milliseconds()
            if wait > 0 {
                let socket = withCore { _ in self.socket }
                guard socket.waitReadable(milliseconds: min(wait, 20)) else { continue }
                // What is queued, within reason: a flood must not hold up the next tick.
                for _ in 0..<64 {
                    guard let (length, _) = socket.receive(into: &buffer, wait: false) else { break }
                    let packet = Array(buffer.prefix(length))
                    let now = MonotonicClock.milliseconds()
                    send(withCore { $0.receive(packet, now: now) })
                }
                continue
            }
            next += Double(AudioFormat.frameMilliseconds)
            applyPending()
            // The microphone is read only while publishing; a recording (a file) only once the
            // path to the server is bound too, so none of it is spoken into a path being set up.
            let microphone = pipeline.send(withCore { $0.publishing && ($0.isBound || live) } ? source.nextFrame() : nil, channels: source.channels)
            let now = MonotonicClock.milliseconds()
            let tick = withCore { $0.tick(now: now, microphone: microphone) }
            if let reason = tick.rebind {
                // The path went silent: the core binds again, from a new socket.
                if let fresh = try? Self.makeSocket() {
                    withCore { _ in socket = fresh }
                } else {
                    logger.warning("cannot open a new media socket (\(reason))")
                }
            }
            send(tick.datagrams)
            for (ssrc, frame) in tick.speakers {
                guard let tap = speakerTaps[ssrc] else { continue }
                var copy = frame
                tap.process(&copy, channels: 1)
            }
            if let spatializer {
                sink.play(pipeline.play(spatializer.render(tick.speakers.map { ($0.ssrc, $0.frame) }), channels: 2))
            } else {
                let played = pipeline.play(tick.playout, channels: tick.playoutChannels)
                sink.play(Channels.convert(played, from: tick.playoutChannels, to: sink.channels))
            }
        }
    }

    /// Spatial sound on (with these places) or off, on the engine's thread.
    private func placeSpeakers(_ positions: [UInt32: SpatialPosition]?) {
        guard let positions, sink.channels == 2 else {
            if positions != nil { logger.warning("spatial sound needs a stereo speaker: playing mono") }
            spatializer = nil
            let separate = !speakerTaps.isEmpty
            withCore { $0.separateSpeakers = separate }
            return
        }
        do {
            if hrtf == nil { hrtf = try HRTF() }
            if spatializer == nil, let hrtf { spatializer = Spatializer(hrtf: hrtf) }
            spatializer?.positions = positions
            withCore { $0.separateSpeakers = true }
        } catch {
            logger.warning("no spatial sound: \(error)")
        }
    }

    /// Settings asked for since the last tick, into the pipeline (on the engine's thread).
    private func applyPending() {
        let (processing, effect, tracks, monitor, spatial, taps) = withCore { _ in
            defer { (pendingProcessing, pendingEffect, pendingTracks, pendingMonitor, pendingSpatial, pendingTaps) = (nil, nil, [], nil, nil, [:]) }
            return (pendingProcessing, pendingEffect, pendingTracks, pendingMonitor, pendingSpatial, pendingTaps)
        }
        if let spatial { placeSpeakers(spatial) }
        if !taps.isEmpty {
            for (point, tap) in taps {
                if case .speaker(let ssrc) = point { speakerTaps[ssrc] = tap } else { pipeline.taps[point] = tap }
            }
            let separate = spatializer != nil || !speakerTaps.isEmpty
            withCore { $0.separateSpeakers = separate }
        }
        for track in tracks { pipeline.add(track) }
        if let monitor { pipeline.monitorVolume = monitor }
        do {
            if let processing { try pipeline.apply(processing) }
            if let effect { try pipeline.apply(effect) }
        } catch {
            logger.warning("the voice pipeline refused a setting: \(error)")
        }
    }
}
#endif
