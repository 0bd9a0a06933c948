import CZlib

/// A zip archive read from memory (PKWARE's APPNOTE: the end record, the central directory, and
/// stored or deflated entries), as resource packs come. What it refuses, with the reason: an
/// archive split over disks, zip64, encrypted entries, other compression methods, two entries of
/// one name, names that climb out of the archive (`..`, an absolute path, a backslash), entries
/// that lie outside the bytes, and more than `limits` allow; an entry whose bytes do not inflate
/// to its size or whose CRC-32 is not its own is refused when read.
public struct ZipArchive: Sendable {
    public struct Entry: Sendable, Equatable {
        /// The path in the archive ("a/b.png"); directories are not listed.
        public var name: String
        /// 0: stored; 8: deflated.
        public var method: UInt16
        public var crc32: UInt32
        public var compressedSize: Int
        /// Its size once inflated.
        public var size: Int
        /// Where its compressed bytes begin in the archive.
        public var start: Int
    }

    /// What an archive may hold: how many entries, and how many bytes all of them inflate to.
    public struct Limits: Sendable {
        public var entries: Int
        public var inflatedBytes: Int

        public init(entries: Int = 10_000, inflatedBytes: Int = 200 << 20) {
            self.entries = entries
            self.inflatedBytes = inflatedBytes
        }
    }

    /// The files, in the central directory's order.
    public let entries: [Entry]
    private let bytes: [UInt8]
    private let index: [String: Int]

    public init(_ bytes: [UInt8], limits: Limits = Limits()) throws(PackError) {
        self.bytes = bytes
        let end = try Self.endRecord(bytes)
        guard end.disk == 0, end.directoryDisk == 0, end.entriesHere == end.entries else { throw PackError("the archive is split over disks") }
        guard end.entries != 0xFFFF, end.directoryOffset != 0xFFFF_FFFF, end.directorySize != 0xFFFF_FFFF else {
            throw PackError("zip64 archives are not taken")
        }
        guard end.entries <= limits.entries else { throw PackError("the archive has \(end.entries) entries; at most \(limits.entries) are taken") }
        var entries: [Entry] = []
        var index: [String: Int] = [:]
        var inflated = 0
        var position = end.directoryOffset
        for _ in 0..<end.entries {
            guard Self.u32(bytes, position) == 0x0201_4B50 else { throw PackError("the central directory is damaged") }
            let flags = Self.u16(bytes, position + 8)
            let method = Self.u16(bytes, position + 10)
            let crc = Self.u32(bytes, position + 16)
            let compressed = Int(Self.u32(bytes, position + 20))
            let size = Int(Self.u32(bytes, position + 24))
            let nameLength = Int(Self.u16(bytes, position + 28))
            let extraLength = Int(Self.u16(bytes, position + 30))
            let commentLength = Int(Self.u16(bytes, position + 32))
            let local = Int(Self.u32(bytes, position + 42))
            guard position + 46 + nameLength <= bytes.count else { throw PackError("the central directory is damaged") }
            guard let name = String(validating: bytes[(position + 46)..<(position + 46 + nameLength)], as: UTF8.self) else {
                throw PackError("an entry's name is not UTF-8")
            }
            position += 46 + nameLength + extraLength + commentLength
            if name.hasSuffix("/") { continue }
            try Self.check(name)
            guard flags & 1 == 0 else { throw PackError("\(name) is encrypted") }
            guard method == 0 || method == 8 else { throw PackError("\(name) is compressed with method \(method); only stored (0) and deflate (8) are taken") }
            guard method == 8 || compressed == size else { throw PackError("\(name) is stored with two sizes") }
            guard index[name] == nil else { throw PackError("\(name) is in the archive twice") }
            guard Self.u32(bytes, local) == 0x0403_4B50, local + 30 <= bytes.count else { throw PackError("\(name)'s local header is damaged") }
            let start = local + 30 + Int(Self.u16(bytes, local + 26)) + Int(Self.u16(bytes, local + 28))
            guard start + compressed <= bytes.count else { throw PackError("\(name) runs past the end of the archive") }
            inflated += size
            guard inflated <= limits.inflatedBytes else { throw PackError("the archive inflates to more than \(limits.inflatedBytes) bytes") }
            index[name] = entries.count
            entries.append(Entry(name: name, method: method, crc32: crc, compressedSize: compressed, size: size, start: start))
        }
        self.entries = entries
        self.index = index
    }

    public func entry(named name: String) -> Entry? {
        index[name].map { entries[$0] }
    }

    /// The entry's bytes, inflated and checked against its size and CRC-32.
    public func data(of entry: Entry) throws(PackError) -> [UInt8] {
        let data: [UInt8]
        if entry.method == 0 {
            data = Array(bytes[entry.start..<(entry.start + entry.size)])
        } else {
            data = try inflate(entry)
        }
        let crc = data.withUnsafeBufferPointer { UInt32(CZlib.crc32(0, $0.baseAddress, UInt32($0.count))) }
        guard crc == entry.crc32 else { throw PackError("\(entry.name) is damaged (its CRC-32 is not the one recorded)") }
        return data
    }

    private func inflate(_ entry: Entry) throws(PackError) -> [UInt8] {
        // Room for exactly its size (a byte for an empty one): an entry that inflates to more
        // does not reach its end, and is refused.
        var output = [UInt8](repeating: 0, count: max(entry.size, 1))
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw PackError("\(entry.name) could not be inflated")
        }
        defer { inflateEnd(&stream) }
        let result: Int32 = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress! + entry.start)
                stream.avail_in = UInt32(entry.compressedSize)
                stream.next_out = out.baseAddress
                stream.avail_out = UInt32(entry.size)
                return CZlib.inflate(&stream, Z_FINISH)
            }
        }
        guard result == Z_STREAM_END, Int(stream.total_out) == entry.size else {
            throw PackError("\(entry.name) does not inflate to its recorded size")
        }
        return entry.size == 0 ? [] : output
    }

    // MARK: Reading

    private struct EndRecord {
        var disk: Int
        var directoryDisk: Int
        var entriesHere: Int
        var entries: Int
        var directorySize: Int
        var directoryOffset: Int
    }

    /// The end of central directory record: the last one, within the 64 KiB a comment may take.
    private static func endRecord(_ bytes: [UInt8]) throws(PackError) -> EndRecord {
        guard bytes.count >= 22 else { throw PackError("not a zip archive (too short)") }
        var position = bytes.count - 22
        let lowest = max(0, bytes.count - 22 - 0xFFFF)
        while position >= lowest {
            if u32(bytes, position) == 0x0605_4B50, position + 22 + Int(u16(bytes, position + 20)) == bytes.count {
                let record = EndRecord(
                    disk: Int(u16(bytes, position + 4)), directoryDisk: Int(u16(bytes, position + 6)), entriesHere: Int(u16(bytes, position + 8)),
                    entries: Int(u16(bytes, position + 10)), directorySize: Int(u32(bytes, position + 12)), directoryOffset: Int(u32(bytes, position + 16)))
                guard record.directoryOffset + record.directorySize <= position || record.directoryOffset == 0xFFFF_FFFF else {
                    throw PackError("the central directory lies outside the archive")
                }
                return record
            }
            position -= 1
        }
        throw PackError("not a zip archive (no end of central directory)")
    }

    /// Refuses a name that could land outside the folder it is unpacked into.
    public static func check(_ name: String) throws(PackError) {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        guard !name.hasPrefix("/"), !name.contains("\\"), !name.contains("\0"), !parts.contains(where: { $0.isEmpty || $0 == ".." || $0 == "." }) else {
            throw PackError("\(name): a name must be a relative path without . or .. parts")
        }
    }

    /// Little-endian integers at `position`; 0 past the end (then a check above fails).
    static func u16(_ bytes: [UInt8], _ position: Int) -> UInt16 {
        guard position >= 0, position + 2 <= bytes.count else { return 0 }
        return UInt16(bytes[position]) | UInt16(bytes[position + 1]) << 8
    }

    static func u32(_ bytes: [UInt8], _ position: Int) -> UInt32 {
        guard position >= 0, position + 4 <= bytes.count else { return 0 }
        return UInt32(bytes[position]) | UInt32(bytes[position + 1]) << 8 | UInt32(bytes[position + 2]) << 16 | UInt32(bytes[position + 3]) << 24
    }
}
