import Foundation

/// `count` random bytes, made eight at a time: a byte at a time, a few megabytes take seconds
/// in a debug build, long enough to starve the tests running beside on a two-core machine.
public func randomBytes(_ count: Int) -> Data {
    var generator = SystemRandomNumberGenerator()
    var words = [UInt64](repeating: 0, count: (count + 7) / 8)
    for index in words.indices { words[index] = generator.next() }
    return words.withUnsafeBytes { Data($0.prefix(count)) }
}
