import Foundation
import Shelf
import ShelfCore

/// Pictures over HTTP: decoded to one of a few sizes by the library's artwork loader (its own
/// bounded cache of pixels), encoded once, and kept encoded in a second bounded cache so that a
/// warm request is a lookup. Responses by artwork ID are immutable: the ID is the content.
public final class ArtworkResponder: Sendable {
    /// The sizes pictures are served at; a request is rounded up to the next, so caches hit.
    public static let sizeSteps = [16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1280, 1536, 2048]

    /// What a picture is sent as.
    public enum Format: String, Sendable {
        case jpeg, png
        var mime: String { self == .jpeg ? "image/jpeg" : "image/png" }
    }

    private struct Key: Hashable {
        let artworkID: ArtworkID
        let size: Int
        let format: Format
    }

    private struct Cache {
        var entries: [Key: (data: Data, used: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let library: Library
    private let limitBytes: Int
    private let cache = Locked(Cache())

    /// The encoded pictures kept now, in bytes (at most the limit given at `init`).
    public var cachedBytes: Int { cache.withLock { $0.bytes } }

    /// A responder over `library`'s pictures keeping at most `limitBytes` of encoded pictures.
    public init(library: Library, limitBytes: Int = 16 << 20) {
        self.library = library
        self.limitBytes = limitBytes
    }

    /// `requested` clamped to 16–2048 and rounded up to a step.
    public static func step(for requested: Int) -> Int {
        let clamped = min(max(requested, 16), 2048)
        return sizeSteps.first { $0 >= clamped } ?? 2048
    }

    /// The ETag of a picture at a size and format: strong, because the bytes never change.
    static func etag(_ id: ArtworkID, size: Int, format: Format) -> String { "\"\(id)-\(size)-\(format.rawValue)\"" }

    /// The picture `id` at `size` in `format`; `cacheControl` says how long clients may keep it.
    public func respond(_ id: ArtworkID, size requested: Int, format: Format, ifNoneMatch: String?, cacheControl: String) async throws -> HTTPResponse {
        let size = Self.step(for: requested)
        let etag = Self.etag(id, size: size, format: format)
        let headers = [("ETag", etag), ("Cache-Control", cacheControl)]
        if Self.matches(ifNoneMatch, etag) { return HTTPResponse(status: 304, headers: headers) }
        let data = try await encoded(Key(artworkID: id, size: size, format: format))
        return HTTPResponse(status: 200, headers: [("Content-Type", format.mime)] + headers, body: .data(data))
    }

    /// A picture file the server fetched itself (a podcast channel's), as JPEG at `size`; decoded
    /// within the codec's limits on each request (few clients ask, and the ETag spares repeats).
    public func respond(file: URL, size requested: Int, ifNoneMatch: String?) async throws -> HTTPResponse {
        let size = Self.step(for: requested)
        var info = stat()
        guard stat(file.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size <= 64 << 20 else {
            throw HTTPError.notFound("the picture file is missing")
        }
        let etag = "\"f\(info.st_ino)-\(info.st_mtim.tv_sec)-\(info.st_size)-\(size)\""
        let headers = [("ETag", etag), ("Cache-Control", "private, max-age=3600")]
        if Self.matches(ifNoneMatch, etag) { return HTTPResponse(status: 304, headers: headers) }
        // POSIX reads: Foundation leaks a 4 KiB buffer for every empty file (`FileContents`).
        guard let data = FileContents.read(file.path) else { throw HTTPError.notFound("the picture file is missing") }
        let image = try ImageCodec.decode(data, maxPixelSize: size)
        let jpeg = try ImageCodec.encode(image, as: .jpeg(quality: 85))
        return HTTPResponse(status: 200, headers: [("Content-Type", "image/jpeg")] + headers, body: .data(jpeg))
    }

    /// Whether `If-None-Match` names `etag` (or is `*`): the client's copy is current.
    static func matches(_ ifNoneMatch: String?, _ etag: String) -> Bool {
        guard let ifNoneMatch else { return false }
        return ifNoneMatch == "*" || ifNoneMatch.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag }
    }

    private func encoded(_ key: Key) async throws -> Data {
        let hit = cache.withLock { cache -> Data? in
            guard let entry = cache.entries[key] else { return nil }
            cache.clock += 1
            cache.entries[key] = (entry.data, cache.clock)
            return entry.data
        }
        if let hit { return hit }
        let image = try await library.artwork.image(of: key.artworkID, maxPixelSize: key.size)
        let data = try ImageCodec.encode(image, as: key.format == .png ? .png : .jpeg(quality: 85))
        store(data, for: key)
        return data
    }

    private func store(_ data: Data, for key: Key) {
        guard data.count <= limitBytes / 4 else { return }
        cache.withLock { cache in
            cache.clock += 1
            if let old = cache.entries[key] { cache.bytes -= old.data.count }
            cache.entries[key] = (data, cache.clock)
            cache.bytes += data.count
            // Evict the least recently used until under the limit; a scan is fine at the few
            // thousand entries a 16 MiB cache of thumbnails holds.
            while cache.bytes > limitBytes, let oldest = cache.entries.min(by: { $0.value.used < $1.value.used }) {
                cache.entries[oldest.key] = nil
                cache.bytes -= oldest.value.data.count
            }
        }
    }
}
