import CMySofa
import Foundation
import MajlisProtocol

/// Head-related transfer functions from a SOFA file (libmysofa): for a direction around the
/// listener, the impulse response reaching each ear and its delay. Debian's libmysofa1 ships MIT's
/// KEMAR measurements as its default set. Not thread-safe: one spatializer owns it.
public final class HRTF {
    /// One direction's filters at the working sample rate.
    public struct Filters: Sendable, Equatable {
        public var left: [Float]
        public var right: [Float]
        /// Extra delay of each ear, samples.
        public var leftDelay: Int
        public var rightDelay: Int
    }

    public static let defaultPath = "/usr/share/libmysofa/default.sofa"

    // Audited: the handle is used by the owner's thread only (the class is not Sendable).
    private let handle: UnsafeMutablePointer<MYSOFA_EASY>
    public let filterLength: Int
    private let sampleRate: Int
    /// Filters by direction, rounded to a degree (and distance to 10 cm): a lookup interpolates.
    private var cache: [SpatialPosition: Filters] = [:]

    public init(path: String = defaultPath, sampleRate: Int = AudioFormat.sampleRate) throws(AudioError) {
        var length: Int32 = 0
        var error: Int32 = 0
        guard let handle = mysofa_open(path, Float(sampleRate), &length, &error), length > 0 else {
            throw AudioError.processing("cannot read the HRTF set \(path) (libmysofa error \(error); Debian's libmysofa1 ships one)")
        }
        self.handle = handle
        filterLength = Int(length)
        self.sampleRate = sampleRate
    }

    deinit { mysofa_close(handle) }

    /// The filters for a source at `position` (SOFA's axes: x ahead, y to the left, z up).
    public func filters(for position: SpatialPosition) -> Filters {
        let key = SpatialPosition(
            azimuth: position.azimuth.rounded(), elevation: position.elevation.rounded(), distance: (position.distance * 10).rounded() / 10)
        if let known = cache[key] { return known }
        let azimuth = key.azimuth * .pi / 180, elevation = key.elevation * .pi / 180
        let x = Float(cos(elevation) * cos(azimuth) * key.distance)
        let y = Float(cos(elevation) * sin(azimuth) * key.distance)
        let z = Float(sin(elevation) * key.distance)
        var left = [Float](repeating: 0, count: filterLength)
        var right = [Float](repeating: 0, count: filterLength)
        var leftDelay: Float = 0, rightDelay: Float = 0
        mysofa_getfilter_float(handle, x, y, z, &left, &right, &leftDelay, &rightDelay)
        // libmysofa gives the delays in seconds.
        let filters = Filters(
            left: left, right: right, leftDelay: Int((Double(leftDelay) * Double(sampleRate)).rounded()),
            rightDelay: Int((Double(rightDelay) * Double(sampleRate)).rounded()))
        if cache.count > 2_000 { cache.removeAll() }
        cache[key] = filters
        return filters
    }
}
