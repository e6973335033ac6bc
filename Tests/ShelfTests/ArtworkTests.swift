import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

/// Real JPEG and PNG bytes, made by the codecs under test from synthetic pixels.
enum TestPictures {
    /// A smooth gradient with a seed-dependent tint (distinct bytes per seed).
    static func pixels(width: Int, height: Int, seed: Int = 0) -> DecodedImage {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * 4
                pixels[offset] = UInt8((x * 255) / max(1, width - 1))
                pixels[offset + 1] = UInt8((y * 255) / max(1, height - 1))
                pixels[offset + 2] = UInt8((seed * 37) % 256)
            }
        }
        return DecodedImage(width: width, height: height, bytesPerRow: width * 4, pixels: pixels)
    }

    static func jpeg(width: Int, height: Int, seed: Int = 0) throws -> Data {
        try ImageCodec.encode(pixels(width: width, height: height, seed: seed), as: .jpeg(quality: 90))
    }

    static func png(width: Int, height: Int, seed: Int = 0) throws -> Data {
        try ImageCodec.encode(pixels(width: width, height: height, seed: seed), as: .png)
    }

    /// Loads a picture from another task while the caller's thread waits: how a test reaches
    /// the loader from inside a write batch, which holds `LibraryActor`.
    static func loadWhileBlocked(_ loader: ArtworkLoader, _ request: ArtworkRequest, maxPixelSize: Int) -> Result<DecodedImage, any Error> {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result<DecodedImage, any Error>?>(nil)
        Task.detached {
            let outcome = await Result { try await loader.image(for: request, maxPixelSize: maxPixelSize) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 }!
    }

    /// A valid PNG signature and IHDR chunk (with its CRC) declaring any size, and no pixel data.
    static func pngHeader(width: UInt32, height: UInt32) -> Data {
        var ihdr = Data("IHDR".utf8)
        for value in [width, height] { withUnsafeBytes(of: value.bigEndian) { ihdr.append(contentsOf: $0) } }
        ihdr.append(contentsOf: [8, 6, 0, 0, 0])  // 8-bit RGBA, no interlace
        var data = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        withUnsafeBytes(of: UInt32(13).bigEndian) { data.append(contentsOf: $0) }
        data.append(ihdr)
        withUnsafeBytes(of: crc32(ihdr).bigEndian) { data.append(contentsOf: $0) }
        // A short IDAT and the IEND: the header reader stops at the first data chunk.
        for (name, body) in [("IDAT", Data([0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])), ("IEND", Data())] {
            withUnsafeBytes(of: UInt32(body.count).bigEndian) { data.append(contentsOf: $0) }
            let chunk = Data(name.utf8) + body
            data.append(chunk)
            withUnsafeBytes(of: crc32(chunk).bigEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

/// Opens once, then lets every waiter through: holds a loader's read where a test wants it.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}

@Suite struct ImageCodecTests {
    @Test func jpegDecodesToTheAskedSizeKeepingAspectAndNeverEnlarging() throws {
        let jpeg = try TestPictures.jpeg(width: 600, height: 400)
        #expect(try ImageCodec.dimensions(of: jpeg) == (600, 400))
        let small = try ImageCodec.decode(jpeg, maxPixelSize: 60)
        #expect((small.width, small.height, small.bytesPerRow) == (60, 40, 240))
        #expect(small.pixels.count == small.cost)
        let whole = try ImageCodec.decode(jpeg, maxPixelSize: 5_000)
        #expect((whole.width, whole.height) == (600, 400))
        // The gradient survives: red grows left to right at every size.
        for image in [small, whole] {
            let row = image.height / 2
            let left = image.pixels[row * image.bytesPerRow]
            let right = image.pixels[row * image.bytesPerRow + (image.width - 1) * 4]
            #expect(left < 30 && right > 225, "\(image.width)px: \(left) … \(right)")
            #expect(image.pixels[row * image.bytesPerRow + 3] == 255)
        }
    }

    @Test func pngRoundTripsExactlyAndScalesDown() throws {
        let source = TestPictures.pixels(width: 90, height: 30, seed: 3)
        let png = try ImageCodec.encode(source, as: .png)
        #expect(try ImageCodec.decode(png, maxPixelSize: 90) == source)
        let scaled = try ImageCodec.decode(png, maxPixelSize: 45)
        #expect((scaled.width, scaled.height) == (45, 15))
        // Area averaging: a 2×2 block of the gradient averages its neighbours.
        let expected = (Int(source.pixels[0]) + Int(source.pixels[4]) + 1) / 2
        #expect(abs(Int(scaled.pixels[0]) - expected) <= 1)
    }

    @Test func badImagesGiveTypedErrorsWithoutCrashingOrAllocating() throws {
        let jpeg = try TestPictures.jpeg(width: 300, height: 300)
        let png = try TestPictures.png(width: 300, height: 300)
        var random = SeededRandom(seed: 5)
        let noise = Data((0..<4096).map { _ in UInt8(random.int(0...255)) })

        for cut in [jpeg.count / 2, jpeg.count - 10, 200, 4] {
            #expect(throws: ImageError.self, "JPEG cut at \(cut)") { try ImageCodec.decode(jpeg.prefix(cut), maxPixelSize: 100) }
        }
        for cut in [png.count / 2, png.count - 20, 40] {
            #expect(throws: ImageError.self, "PNG cut at \(cut)") { try ImageCodec.decode(png.prefix(cut), maxPixelSize: 100) }
        }
        #expect(throws: ImageError.unknownFormat) { try ImageCodec.decode(noise, maxPixelSize: 100) }
        #expect(throws: ImageError.unknownFormat) { try ImageCodec.decode(Data(), maxPixelSize: 100) }
        #expect { try ImageCodec.decode(Data([0xFF, 0xD8, 0xFF]) + noise, maxPixelSize: 100) } throws: { error in
            if case ImageError.corrupt = error { return true }
            return false
        }
        // 100,000 × 100,000 RGBA would be 40 GB: refused from the header.
        let huge = TestPictures.pngHeader(width: 100_000, height: 100_000)
        #expect(try ImageCodec.dimensions(of: huge) == (100_000, 100_000))
        #expect(throws: ImageError.tooLarge(width: 100_000, height: 100_000, limits: ImageLimits())) {
            try ImageCodec.decode(huge, maxPixelSize: 100)
        }
        let limited = ImageLimits(maxSide: 200, maxPixels: 1 << 20)
        #expect(throws: ImageError.tooLarge(width: 300, height: 300, limits: limited)) { try ImageCodec.decode(jpeg, maxPixelSize: 100, limits: limited) }
    }
}

@Suite struct ArtworkCacheTests {
    func image(_ side: Int) -> DecodedImage { TestPictures.pixels(width: side, height: side) }

    @Test func leastRecentlyUsedImagesMakeRoomAndTheLimitHolds() {
        let cache = ArtworkCache(limitBytes: 100 * 100 * 4)  // holds four 50×50 images
        let keys = (0..<6).map { _ in ArtworkCache.Key(artworkID: ArtworkID(), maxPixelSize: 50) }
        for key in keys.prefix(4) { cache.insert(image(50), for: key) }
        #expect(cache.stats.imagesHeld == 4 && cache.stats.cachedBytes == 40_000)
        #expect(cache.image(for: keys[0]) != nil)  // now the most recent
        cache.insert(image(50), for: keys[4])  // evicts keys[1], the least recent
        #expect(!cache.contains(keys[1]) && cache.contains(keys[0]) && cache.contains(keys[4]))
        #expect(cache.stats.evictions == 1)
        cache.insert(image(120), for: keys[5])  // larger than the whole limit: not kept
        #expect(!cache.contains(keys[5]) && cache.stats.uncacheable == 1 && cache.stats.imagesHeld == 4)
        cache.insert(image(99), for: keys[5])  // needs all of it: everything else goes
        #expect(cache.stats.imagesHeld == 1 && cache.stats.cachedBytes == 99 * 99 * 4)
        #expect(cache.image(for: keys[1]) == nil)
        #expect(cache.stats.hits == 1 && cache.stats.misses == 1)
        #expect(cache.invariantViolations().isEmpty)
    }
}

@Suite struct ArtworkLoaderTests {
    /// A library with `count` tracks, each showing its own JPEG, and one more sharing track 1's.
    static func makeLibrary(_ count: Int = 3) async throws -> (TemporaryDirectory, Library, [TrackID], [ArtworkID]) {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.disableMirror()
        let (tracks, pictures) = try await library.write { batch in
            var tracks: [TrackID] = []
            var pictures: [ArtworkID] = []
            for index in 0..<count {
                let picture = try batch.addArtwork(try TestPictures.jpeg(width: 400, height: 400, seed: index))
                pictures.append(picture)
                tracks.append(try batch.insert(Track(path: "/a/\(index).flac", title: "T\(index)", artworkID: picture)))
            }
            tracks.append(try batch.insert(Track(path: "/a/shared.flac", title: "Shared", artworkID: pictures[0])))
            let garbage = try batch.addArtwork(Data("garbage, not a picture".utf8))
            pictures.append(garbage)
            tracks.append(try batch.insert(Track(path: "/a/garbage.flac", title: "Garbage", artworkID: garbage)))
            return (tracks, pictures)
        }
        return (dir, library, tracks, pictures)
    }

    @Test func sameSizeComesFromTheCacheAnotherSizeIsReadAgain() async throws {
        let (dir, library, tracks, pictures) = try await Self.makeLibrary()
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let loader = library.makeArtworkLoader()
        let request = ArtworkRequest(trackID: tracks[1], artworkID: pictures[1])
        let first = try await loader.image(for: request, maxPixelSize: 60)
        #expect((first.width, first.height) == (60, 60))
        #expect(try await loader.image(for: request, maxPixelSize: 60) == first)
        #expect(loader.stats.reads == 1 && loader.stats.decodes == 1 && loader.cache.stats.hits == 1)
        let larger = try await loader.image(for: request, maxPixelSize: 200)
        #expect(larger.width == 200 && loader.stats.reads == 2)
        #expect(loader.cache.invariantViolations().isEmpty)
    }

    @Test func concurrentIdenticalRequestsShareOneDecode() async throws {
        let (dir, library, tracks, pictures) = try await Self.makeLibrary()
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let gate = Gate()
        let loader = library.makeArtworkLoader(beforeRead: { _ in await gate.wait() })
        let request = ArtworkRequest(trackID: tracks[0], artworkID: pictures[0])
        let tasks = (0..<8).map { _ in Task { try await loader.image(for: request, maxPixelSize: 80) } }
        while loader.stats.joined < 7 { try await Task.sleep(for: .milliseconds(2)) }
        await gate.open()
        var images: [DecodedImage] = []
        for task in tasks { images.append(try await task.value) }
        #expect(Set(images.map(\.pixels)).count == 1)
        #expect(loader.stats.decodes == 1 && loader.stats.reads == 1)
    }

    enum Change: CaseIterable { case deleteTrack, replacePicture, cancel }

    /// Seed 000's rules: a request made stale (or cancelled) while its read was held ends in
    /// CancellationError, whether the load then succeeded or failed.
    @Test(arguments: Change.allCases, [true, false])
    func aRequestMadeStaleWhileWaitingIsCancelled(_ change: Change, loadSucceeds: Bool) async throws {
        let (dir, library, tracks, pictures) = try await Self.makeLibrary(3)
        defer { withExtendedLifetime(dir) {} }  // the directory must outlive every read below
        let started = Gate()
        let gate = Gate()
        let loader = library.makeArtworkLoader(beforeRead: { _ in
            await started.open()
            await gate.wait()
        })
        // Track 0's picture is shared with track 3, so deleting or re-picturing track 0 keeps the
        // blob and the held read succeeds; track 1's picture is collected, so its read fails.
        // A cancelled request fails its load on track 4's garbage picture.
        let target = loadSucceeds ? 0 : (change == .cancel ? 4 : 1)
        let request = ArtworkRequest(trackID: tracks[target], artworkID: pictures[target == 4 ? 3 : target])
        let task = Task { try await loader.image(for: request, maxPixelSize: 64) }
        await started.wait()
        switch change {
        case .deleteTrack:
            try await library.write { try $0.deleteTrack(tracks[target]) }
        case .replacePicture:
            try await library.write { batch in
                let replacement = try batch.addArtwork(try TestPictures.jpeg(width: 100, height: 100, seed: 99))
                try batch.updateTrack(tracks[target]) { $0.artworkID = replacement }
            }
        case .cancel:
            task.cancel()
        }
        let blob = try await library.artworkData(request.artworkID)
        #expect((blob != nil) == (loadSucceeds || change == .cancel))
        await gate.open()
        await #expect(throws: CancellationError.self) { try await task.value }
        // The same load on a request still valid: the picture, or the read's own error.
        if change == .cancel {
            let fresh = library.makeArtworkLoader()
            if loadSucceeds {
                #expect(try await fresh.image(for: request, maxPixelSize: 64).width == 64)
            } else {
                await #expect(throws: ImageError.unknownFormat) { try await fresh.image(for: request, maxPixelSize: 64) }
            }
        }
    }

    @Test func errorsOfAValidRequestAreReturnedAsTheyAre() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let (track, picture) = try await library.write { batch in
            let picture = try batch.addArtwork(Data("not a picture at all".utf8))
            return (try batch.insert(Track(path: "/bad.flac", artworkID: picture)), picture)
        }
        let loader = library.makeArtworkLoader()
        await #expect(throws: ImageError.unknownFormat) {
            try await loader.image(for: ArtworkRequest(trackID: track, artworkID: picture), maxPixelSize: 60)
        }
        try await library.waitForMirror()
    }

    @Test func pendingPicturesShowBeforeTheCommitAndComeFromTheCacheAfter() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.disableMirror()
        let loader = library.artwork
        let bytes = try TestPictures.jpeg(width: 300, height: 200, seed: 7)
        let (track, picture, pendingWidth) = try await library.write { batch in
            let picture = try batch.addArtwork(bytes)
            let track = try batch.insert(Track(path: "/pending.flac", title: "Pending", artworkID: picture))
            #expect(batch.pendingArtworkData(picture) == bytes)
            let image = try TestPictures.loadWhileBlocked(loader, ArtworkRequest(trackID: track, artworkID: picture), maxPixelSize: 90).get()
            return (track, picture, image.width)
        }
        #expect(pendingWidth == 90)
        #expect(loader.stats.pendingReads == 1 && loader.stats.reads == 0)
        #expect(library.pendingArtwork.data(picture) == nil, "pending bytes end with the batch")
        let after = try await loader.image(for: ArtworkRequest(trackID: track, artworkID: picture), maxPixelSize: 90)
        #expect(after.width == 90 && loader.stats.reads == 0 && loader.cache.stats.hits == 1)
        _ = try await loader.image(for: ArtworkRequest(trackID: track, artworkID: picture), maxPixelSize: 30)
        #expect(loader.stats.reads == 1, "another size reads the committed blob")
    }
}

@Suite struct PendingArtworkRollbackTests {
    struct Abort: Error {}

    /// A picture decoded while its batch was open is dropped from the cache when the batch rolls back.
    @Test func aRolledBackBatchLeavesNoDecodedPicture() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.disableMirror()
        let loader = library.artwork
        let bytes = try TestPictures.jpeg(width: 120, height: 90, seed: 8)
        let picture = Locked<ArtworkID?>(nil)
        await #expect(throws: Abort.self) {
            try await library.write { batch in
                let id = try batch.addArtwork(bytes)
                let track = try batch.insert(Track(path: "/x.flac", artworkID: id))
                picture.withLock { $0 = id }
                _ = TestPictures.loadWhileBlocked(loader, ArtworkRequest(trackID: track, artworkID: id), maxPixelSize: 40)
                #expect(loader.cache.contains(ArtworkCache.Key(artworkID: id, maxPixelSize: 40)))
                throw Abort()
            }
        }
        let id = try #require(picture.withLock { $0 })
        #expect(!loader.cache.contains(ArtworkCache.Key(artworkID: id, maxPixelSize: 40)))
        let stored = try await library.artworkData(id)
        #expect(library.pendingArtwork.data(id) == nil && stored == nil)
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
