-- Shelf schema 18, written by Tests/ShelfTests/UpgradeFixtureTests.swift (see README.md); regenerate, do not edit.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO meta VALUES('created','2026-12-07T01:03:53Z');
INSERT INTO meta VALUES('group_log_start','0');
INSERT INTO meta VALUES('store_id','5E1F0F1C-7E57-4000-8000-000000000001');
CREATE TABLE artwork (
  id         BLOB    PRIMARY KEY,
  sha256     BLOB    NOT NULL UNIQUE,
  byte_count INTEGER NOT NULL,
  created    REAL    NOT NULL,
  data       BLOB    NOT NULL
);
INSERT INTO artwork VALUES(X'aae8b0436f0c4b86b4c22a0d94337652',X'2bd426a6ec1870176e10371dbeacc2f4f201564ce60a3d4c0afca800a5c18fd7',667,1796605433.7107505798,X'ffd8ffe000104a46494600010100000100010000ffdb0043000302020302020303030304030304050805050404050a070706080c0a0c0c0b0a0b0b0d0e12100d0e110e0b0b1016101113141515150c0f171816141812141514ffdb00430103040405040509050509140d0b0d1414141414141414141414141414141414141414141414141414141414141414141414141414141414141414141414141414ffc00011080008000803012200021101031101ffc4001f0000010501010101010100000000000000000102030405060708090a0bffc400b5100002010303020403050504040000017d01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25262728292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffc4001f0100030101010101010101010000000000000102030405060708090a0bffc400b51100020102040403040705040400010277000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a162434e125f11718191a262728292a35363738393a434445464748494a535455565758595a636465666768696a737475767778797a82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9faffda000c03010002110311003f00c1f839fb1e7fa8ff0042f4fe1a28a2bf8eb39e2ccdbeb72fde7f5f79f59e1a71c677feafd2fdeff5a799ffd9');
INSERT INTO artwork VALUES(X'e8428c1ea02a42aa9df511993b38bd67',X'3a69b0b2afd7c0a94dbbfab49e6f3bfc6ef1de888e93bc805da1a6d245fdf3e1',667,1796605433.7107505798,X'ffd8ffe000104a46494600010100000100010000ffdb0043000302020302020303030304030304050805050404050a070706080c0a0c0c0b0a0b0b0d0e12100d0e110e0b0b1016101113141515150c0f171816141812141514ffdb00430103040405040509050509140d0b0d1414141414141414141414141414141414141414141414141414141414141414141414141414141414141414141414141414ffc00011080008000803012200021101031101ffc4001f0000010501010101010100000000000000000102030405060708090a0bffc400b5100002010303020403050504040000017d01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25262728292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffc4001f0100030101010101010101010000000000000102030405060708090a0bffc400b51100020102040403040705040400010277000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a162434e125f11718191a262728292a35363738393a434445464748494a535455565758595a636465666768696a737475767778797a82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9faffda000c03010002110311003f00cdf837fb1e7fa8ff0042f4fe1a28a2bf9af39e2ccdbeb72fde7f5f79f49e1a71c677feafd2fdeff5a799ffd9');
CREATE TABLE track (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  path              TEXT    NOT NULL UNIQUE,
  file_size         INTEGER NOT NULL DEFAULT 0,
  file_modified     REAL,
  title             TEXT,
  artist            TEXT,
  album             TEXT,
  album_artist      TEXT,
  composer          TEXT,
  genre             TEXT,
  year              INTEGER,
  track_number      INTEGER,
  track_count       INTEGER,
  disc_number       INTEGER,
  disc_count        INTEGER,
  duration          REAL,
  bitrate           INTEGER,
  sample_rate       INTEGER,
  channels          INTEGER,
  codec             TEXT,
  compilation       INTEGER NOT NULL DEFAULT 0,
  comment           TEXT,
  lyrics            TEXT,
  sort_title        TEXT,
  sort_artist       TEXT,
  sort_album        TEXT,
  sort_album_artist TEXT,
  sort_composer     TEXT,
  artwork_id        BLOB REFERENCES artwork(id),
  date_added        REAL    NOT NULL,
  date_modified     REAL    NOT NULL,
  play_count        INTEGER NOT NULL DEFAULT 0,
  skip_count        INTEGER NOT NULL DEFAULT 0,
  last_played       REAL,
  rating            INTEGER NOT NULL DEFAULT 0 CHECK (rating BETWEEN 0 AND 100),
  audio_hash        TEXT
, details TEXT, sidecars TEXT, missing_since REAL);
INSERT INTO track VALUES(1,'/fixture/music/The Fixtures - Fixture Album/01.flac',39631,1796605433.7190315724,'Opening (edited)','The Fixtures','Fixture Album','The Fixtures',NULL,'Rock',1999,1,4,NULL,NULL,0.2000000000000000111,1412,44100,2,'flac',0,'edited before the upgrade',NULL,NULL,'Fixtures, The',NULL,NULL,NULL,X'aae8b0436f0c4b86b4c22a0d94337652',1796605433.7107505798,1796605433.720061779,1,0,1700000000.0,80,'v1:25c2349bf75beebd4bb6d24a77f1aab3b1d24366cc3da19bd61af74c6ddaedd5','aThe FixturesaaThe FixturesgRockrd1999bd16',NULL,NULL);
INSERT INTO track VALUES(2,'/fixture/music/The Fixtures - Fixture Album/02.flac',39635,1796605433.5436718464,'Second Song','The Fixtures','Fixture Album','The Fixtures',NULL,'Rock',1999,2,4,NULL,NULL,0.2000000000000000111,1412,44100,2,'flac',0,NULL,NULL,NULL,'Fixtures, The',NULL,NULL,NULL,X'aae8b0436f0c4b86b4c22a0d94337652',1796605433.7107505798,1796605433.7061600685,0,0,NULL,0,'v1:d0efa175ba75e8b8ddf88d7d9889b2d7962387793c42e49d3d54b99cf9dee4b8','aThe FixturesaaThe FixturesgRockrd1999bd16',NULL,NULL);
INSERT INTO track VALUES(3,'/fixture/music/The Fixtures - Fixture Album/03.flac',39632,1796605433.5838150977,'Track 10','The Fixtures','Fixture Album','The Fixtures',NULL,'Rock',1999,3,4,NULL,NULL,0.2000000000000000111,1412,44100,2,'flac',0,NULL,NULL,NULL,'Fixtures, The',NULL,NULL,NULL,X'aae8b0436f0c4b86b4c22a0d94337652',1796605433.7107505798,1796605433.70723176,0,0,NULL,0,'v1:737f43d309ee2320c7c9ac08d1e4125d61c83a8f77fb6ff86c3d14fd1369e1b9','aThe FixturesaaThe FixturesgRockrd1999bd16',NULL,NULL);
INSERT INTO track VALUES(4,'/fixture/music/The Fixtures - Fixture Album/04.flac',39640,1796605433.6240866184,'Ünïcode Ballad','The Fixtures','Fixture Album','The Fixtures',NULL,'Rock',1999,4,4,NULL,NULL,0.2000000000000000111,1412,44100,2,'flac',0,NULL,NULL,NULL,'Fixtures, The',NULL,NULL,NULL,X'aae8b0436f0c4b86b4c22a0d94337652',1796605433.7107505798,1796605433.7072620392,0,0,NULL,0,'v1:ff04b0e9ca8129ad8580e6554831f96fd25104560bcdca9110981cb8d3ee4d58','aThe FixturesaaThe FixturesgRockrd1999bd16',NULL,NULL);
INSERT INTO track VALUES(5,'/fixture/music/宇多田ヒカル - 光/01.wav',36618,1796605433.6326651572,'光','宇多田ヒカル','光','宇多田ヒカル',NULL,'J-Pop',2002,1,4,NULL,NULL,0.2000000000000000111,1411,44100,2,'pcm',0,NULL,NULL,NULL,'うただひかる',NULL,NULL,NULL,X'e8428c1ea02a42aa9df511993b38bd67',1796605433.7107505798,1796605433.7079648971,0,0,NULL,0,'v1:c03d2cafe3e043a7c18809d3e3b1947507b20a5f3b09b68b4989e2861d1e0d75','a宇多田ヒカルaa宇多田ヒカルgJ-Poprd2002bd16',NULL,NULL);
INSERT INTO track VALUES(6,'/fixture/music/宇多田ヒカル - 光/02.wav',36630,1796605433.6406548023,'traveling','宇多田ヒカル','光','宇多田ヒカル',NULL,'J-Pop',2002,2,4,NULL,NULL,0.2000000000000000111,1411,44100,2,'pcm',0,NULL,NULL,NULL,'うただひかる',NULL,NULL,NULL,X'e8428c1ea02a42aa9df511993b38bd67',1796605433.7107505798,1796605433.7079434394,0,0,NULL,0,'v1:e21cd30ab6120dfbbf815561b9e6796035ca94c0fa54bb47191f76b16d6bfe6b','a宇多田ヒカルaa宇多田ヒカルgJ-Poprd2002bd16',NULL,NULL);
INSERT INTO track VALUES(8,'/fixture/music/宇多田ヒカル - 光/04.wav',36634,1796605433.6564714908,'First Love','宇多田ヒカル','光','宇多田ヒカル',NULL,'J-Pop',2002,4,4,NULL,NULL,0.2000000000000000111,1411,44100,2,'pcm',0,NULL,NULL,NULL,'うただひかる',NULL,NULL,NULL,X'e8428c1ea02a42aa9df511993b38bd67',1796605433.7107505798,1796605433.7085170745,0,0,NULL,0,'v1:b2211a6d4cc810833a1a41422f0b105a9cc8702365b1fddef33fe8648c8cb8ab','a宇多田ヒカルaa宇多田ヒカルgJ-Poprd2002bd16',NULL,NULL);
CREATE TABLE playlist (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  name          TEXT    NOT NULL,
  parent_id     INTEGER REFERENCES playlist(id) ON DELETE CASCADE,
  kind          INTEGER NOT NULL DEFAULT 0,
  rules         TEXT,
  date_added    REAL    NOT NULL,
  date_modified REAL    NOT NULL
, comment TEXT);
INSERT INTO playlist VALUES(1,'Fixture mix',NULL,0,NULL,1796605433.7222938537,1796605433.7222938537,'#fixture');
INSERT INTO playlist VALUES(2,'Fixture rock',NULL,2,'{"condition":{"filter":{"_0":{"text":{"_0":"genre","_1":{"equals":{"_0":"rock"}}}}}}}',1796605433.7247924805,1796605433.7247924805,NULL);
CREATE TABLE playlist_item (
  playlist_id INTEGER NOT NULL REFERENCES playlist(id) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  track_id    INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
  PRIMARY KEY (playlist_id, position)
) WITHOUT ROWID;
INSERT INTO playlist_item VALUES(1,0,1);
INSERT INTO playlist_item VALUES(1,3,1);
INSERT INTO playlist_item VALUES(1,2,2);
INSERT INTO playlist_item VALUES(1,1,5);
CREATE TABLE change_transaction (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  committed_at REAL NOT NULL
);
INSERT INTO change_transaction VALUES(1,1796605433.7107505798);
INSERT INTO change_transaction VALUES(2,1796605433.720061779);
INSERT INTO change_transaction VALUES(3,1796605433.7213420867);
INSERT INTO change_transaction VALUES(4,1796605433.7222938537);
INSERT INTO change_transaction VALUES(5,1796605433.7247924805);
INSERT INTO change_transaction VALUES(6,1796605433.7281098365);
CREATE TABLE change_log (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  tx          INTEGER NOT NULL,
  object_type INTEGER NOT NULL,
  object_id            NOT NULL,
  op          INTEGER NOT NULL,
  groups      INTEGER NOT NULL DEFAULT 0
);
INSERT INTO change_log VALUES(1,1,2,X'aae8b0436f0c4b86b4c22a0d94337652',1,0);
INSERT INTO change_log VALUES(2,1,1,1,1,0);
INSERT INTO change_log VALUES(3,1,1,2,1,0);
INSERT INTO change_log VALUES(4,1,1,3,1,0);
INSERT INTO change_log VALUES(5,1,1,4,1,0);
INSERT INTO change_log VALUES(6,1,2,X'e8428c1ea02a42aa9df511993b38bd67',1,0);
INSERT INTO change_log VALUES(7,1,1,5,1,0);
INSERT INTO change_log VALUES(8,1,1,6,1,0);
INSERT INTO change_log VALUES(9,1,1,7,1,0);
INSERT INTO change_log VALUES(10,1,1,8,1,0);
INSERT INTO change_log VALUES(11,2,1,1,2,9);
INSERT INTO change_log VALUES(12,3,1,7,3,0);
INSERT INTO change_log VALUES(13,4,3,1,1,0);
INSERT INTO change_log VALUES(14,5,3,2,1,0);
INSERT INTO change_log VALUES(15,6,1,1,2,36);
INSERT INTO change_log VALUES(16,6,1,5,2,32);
INSERT INTO change_log VALUES(17,6,1,2,2,32);
INSERT INTO change_log VALUES(18,6,4,2,1,0);
INSERT INTO change_log VALUES(19,6,3,1,2,1);
CREATE TABLE playlist_item_log (
  tx          INTEGER NOT NULL,
  playlist_id INTEGER NOT NULL,
  track_id    INTEGER NOT NULL,
  delta       INTEGER NOT NULL,
  PRIMARY KEY (tx, playlist_id, track_id)
) WITHOUT ROWID;
INSERT INTO playlist_item_log VALUES(4,1,1,2);
INSERT INTO playlist_item_log VALUES(4,1,2,1);
INSERT INTO playlist_item_log VALUES(4,1,5,1);
CREATE TABLE change_summary (
  object_type    INTEGER NOT NULL,
  object_id              NOT NULL,
  existed_before INTEGER NOT NULL,
  exists_after   INTEGER NOT NULL,
  groups         INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (object_type, object_id)
) WITHOUT ROWID;
CREATE TABLE user (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  name             TEXT    NOT NULL UNIQUE COLLATE NOCASE,
  is_admin         INTEGER NOT NULL DEFAULT 0,
  is_owner         INTEGER NOT NULL DEFAULT 0,
  password         BLOB    NOT NULL,
  created          REAL    NOT NULL,
  password_changed REAL
, email TEXT NOT NULL DEFAULT '', roles TEXT NOT NULL DEFAULT 'stream,download,playlist,share,podcast,settings,coverArt,comment,scrobbling', max_bit_rate INTEGER NOT NULL DEFAULT 0, libraries TEXT, scrobble_rules TEXT);
INSERT INTO user VALUES(1,'owner',1,1,X'01541b14098ab398f06363f51f5ce2999fd2ab9cd3f25ca5be41ef3d6c5d525371059b21ac1c7244e8ec9ecdbc53e60f2d571f',1796605433.725855112,NULL,'','stream,download,playlist,share,podcast,settings,coverArt,comment,scrobbling',0,NULL,NULL);
INSERT INTO user VALUES(2,'guest',0,0,X'014e3a1390c954b1a572b4f57e3b47ad7711f33b37e18f6e6daa5e297cd6ab37227e8e343055d7b3a2df5c52ec8cccfd723b284345f5a5001cda',1796605433.7268319129,NULL,'','stream,download,playlist,share,podcast,settings,coverArt,comment,scrobbling',0,NULL,NULL);
CREATE TABLE api_key (
  id        TEXT    PRIMARY KEY,
  user_id   INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  sha256    BLOB    NOT NULL UNIQUE,
  created   REAL    NOT NULL,
  last_used REAL
);
INSERT INTO api_key VALUES('t7hahage4n',2,X'7e03459703ecac828cb05f15a664f91a1771d04d92bafda494bb00cb8f8923b8',1796605433.7272756099,NULL);
CREATE TABLE user_session (
  sha256  BLOB    PRIMARY KEY,
  user_id INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  created REAL    NOT NULL,
  expires REAL    NOT NULL
) WITHOUT ROWID;
CREATE TABLE user_track (
  user_id     INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  track_id    INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
  starred     REAL,
  rating      INTEGER CHECK (rating BETWEEN 0 AND 100),
  play_count  INTEGER NOT NULL DEFAULT 0,
  last_played REAL,
  PRIMARY KEY (user_id, track_id)
) WITHOUT ROWID;
INSERT INTO user_track VALUES(1,1,NULL,80,1,1700000000.0);
INSERT INTO user_track VALUES(2,1,1796605433.7281098365,NULL,0,NULL);
INSERT INTO user_track VALUES(2,2,NULL,NULL,1,1700000000.0);
INSERT INTO user_track VALUES(2,5,1796605433.7281098365,60,0,NULL);
CREATE TABLE playlist_owner (
  playlist_id INTEGER PRIMARY KEY REFERENCES playlist(id) ON DELETE CASCADE,
  user_id     INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  public      INTEGER NOT NULL DEFAULT 0
);
INSERT INTO playlist_owner VALUES(1,2,1);
CREATE TABLE user_group_star (
  user_id  INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  kind     INTEGER NOT NULL,
  group_id INTEGER NOT NULL,
  starred  REAL    NOT NULL,
  PRIMARY KEY (user_id, kind, group_id)
) WITHOUT ROWID;
INSERT INTO user_group_star VALUES(2,0,3230936442399233643,1796605433.7281098365);
CREATE TABLE play_queue (
  user_id    INTEGER PRIMARY KEY REFERENCES user(id) ON DELETE CASCADE,
  current    INTEGER,
  position   INTEGER NOT NULL DEFAULT 0,
  changed    REAL    NOT NULL,
  changed_by TEXT    NOT NULL DEFAULT ''
, current_index INTEGER);
INSERT INTO play_queue VALUES(2,5,1234,1796605433.7281098365,'fixture',1);
CREATE TABLE play_queue_item (
  user_id  INTEGER NOT NULL REFERENCES play_queue(user_id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  track_id INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
  PRIMARY KEY (user_id, position)
) WITHOUT ROWID;
INSERT INTO play_queue_item VALUES(2,0,1);
INSERT INTO play_queue_item VALUES(2,2,2);
INSERT INTO play_queue_item VALUES(2,1,5);
CREATE TABLE playlist_file (
  path        TEXT    PRIMARY KEY,
  playlist_id INTEGER NOT NULL REFERENCES playlist(id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE TABLE artist_picture (
  album_artist_id INTEGER PRIMARY KEY,
  artist_id       INTEGER NOT NULL,
  name            TEXT    NOT NULL,
  artwork_id      BLOB    NOT NULL REFERENCES artwork(id),
  path            TEXT    NOT NULL,
  stamp           TEXT    NOT NULL
);
CREATE TABLE bookmark (
  user_id  INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  track_id INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  comment  TEXT    NOT NULL DEFAULT '',
  created  REAL    NOT NULL,
  changed  REAL    NOT NULL,
  PRIMARY KEY (user_id, track_id)
) WITHOUT ROWID;
INSERT INTO bookmark VALUES(2,2,5000,'fixture bookmark',1796605433.7281098365,1796605433.7281098365);
CREATE TABLE radio_station (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  name          TEXT    NOT NULL,
  stream_url    TEXT    NOT NULL,
  home_page_url TEXT,
  created       REAL    NOT NULL
);
INSERT INTO radio_station VALUES(1,'Fixture FM','https://radio.example/stream','https://radio.example/',1796605433.7281098365);
CREATE TABLE share (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  token        TEXT    NOT NULL UNIQUE,
  user_id      INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  description  TEXT    NOT NULL DEFAULT '',
  created      REAL    NOT NULL,
  expires      REAL,
  last_visited REAL,
  visit_count  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO share VALUES(1,'Rk1njg6RUx8vIx0moqLz0g',2,'fixture share',1796605433.7281098365,NULL,NULL,0);
CREATE TABLE share_item (
  share_id INTEGER NOT NULL REFERENCES share(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  track_id INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
  PRIMARY KEY (share_id, position)
) WITHOUT ROWID;
INSERT INTO share_item VALUES(1,0,1);
INSERT INTO share_item VALUES(1,1,5);
CREATE TABLE group_log (
  tx       INTEGER NOT NULL,
  kind     INTEGER NOT NULL,
  group_id INTEGER NOT NULL,
  PRIMARY KEY (tx, kind, group_id)
) WITHOUT ROWID;
INSERT INTO group_log VALUES(1,0,871048057674893665);
INSERT INTO group_log VALUES(1,0,3230936442399233643);
INSERT INTO group_log VALUES(1,2,2050713467351485663);
INSERT INTO group_log VALUES(1,2,2581136528966819450);
INSERT INTO group_log VALUES(2,0,3230936442399233643);
INSERT INTO group_log VALUES(2,2,2581136528966819450);
INSERT INTO group_log VALUES(3,0,871048057674893665);
INSERT INTO group_log VALUES(3,2,2050713467351485663);
INSERT INTO group_log VALUES(6,0,3230936442399233643);
INSERT INTO group_log VALUES(6,2,2581136528966819450);
CREATE TABLE podcast_channel (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  url           TEXT    NOT NULL UNIQUE,
  title         TEXT    NOT NULL DEFAULT '',
  description   TEXT    NOT NULL DEFAULT '',
  image_url     TEXT,
  image_file    TEXT,
  status        TEXT    NOT NULL DEFAULT 'new',
  error_message TEXT,
  created       REAL    NOT NULL,
  refreshed     REAL
);
CREATE TABLE podcast_episode (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  channel_id     INTEGER NOT NULL REFERENCES podcast_channel(id) ON DELETE CASCADE,
  guid           TEXT    NOT NULL,
  title          TEXT    NOT NULL DEFAULT '',
  description    TEXT    NOT NULL DEFAULT '',
  published      REAL,
  url            TEXT    NOT NULL,
  mime_type      TEXT,
  declared_size  INTEGER,
  duration       REAL,
  status         TEXT    NOT NULL DEFAULT 'new',
  error_message  TEXT,
  file           TEXT,
  size           INTEGER,
  bit_rate       INTEGER,
  codec          TEXT,
  created        REAL    NOT NULL,
  UNIQUE (channel_id, guid)
);
CREATE TABLE music_root (
  path       TEXT    PRIMARY KEY,
  device     INTEGER,
  added      REAL    NOT NULL,
  last_seen  REAL
, library_id INTEGER REFERENCES library(id)) WITHOUT ROWID;
INSERT INTO music_root VALUES('/fixture/music',65024,1796605433.7013084888,NULL,1);
CREATE TABLE library (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  name    TEXT    NOT NULL UNIQUE COLLATE NOCASE,
  created REAL    NOT NULL
);
INSERT INTO library VALUES(1,'Music',1796605433.6761298179);
CREATE TABLE listen (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id        INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  track_id       INTEGER REFERENCES track(id) ON DELETE SET NULL,
  played_at      REAL    NOT NULL,
  heard          REAL,
  source         TEXT    NOT NULL,
  client         TEXT    NOT NULL DEFAULT '',
  artist         TEXT    NOT NULL DEFAULT '',
  title          TEXT    NOT NULL DEFAULT '',
  album          TEXT    NOT NULL DEFAULT '',
  album_artist   TEXT    NOT NULL DEFAULT '',
  duration       REAL,
  recording_mbid TEXT,
  release_mbid   TEXT
);
INSERT INTO listen VALUES(1,1,1,1700000000.0,NULL,'api','','The Fixtures','Opening (edited)','Fixture Album','The Fixtures',0.2000000000000000111,NULL,NULL);
INSERT INTO listen VALUES(2,2,2,1700000000.0,NULL,'api','','The Fixtures','Second Song','Fixture Album','The Fixtures',0.2000000000000000111,NULL,NULL);
CREATE TABLE scrobble_link (
  user_id      INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  service      TEXT    NOT NULL,
  secret       BLOB    NOT NULL,
  account      TEXT    NOT NULL DEFAULT '',
  url          TEXT,
  linked       REAL    NOT NULL,
  paused       REAL,
  pause_reason TEXT,
  sent         INTEGER NOT NULL DEFAULT 0,
  last_sent    REAL,
  last_error   TEXT,
  PRIMARY KEY (user_id, service)
) WITHOUT ROWID;
INSERT INTO scrobble_link VALUES(2,'listenbrainz',X'0186e05b21c50d87ab2242608c394e78310a83081ce96b86bc868df19f77435d57b7095c5452d53f65b7','guest',NULL,1796605433.7281098365,NULL,NULL,0,NULL,NULL);
CREATE TABLE scrobble_outbox (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id      INTEGER NOT NULL,
  service      TEXT    NOT NULL,
  listen_id    INTEGER NOT NULL REFERENCES listen(id) ON DELETE CASCADE,
  played_at    REAL    NOT NULL,
  attempts     INTEGER NOT NULL DEFAULT 0,
  next_attempt REAL    NOT NULL DEFAULT 0,
  sending      INTEGER NOT NULL DEFAULT 0,
  refused      TEXT,
  FOREIGN KEY (user_id, service) REFERENCES scrobble_link(user_id, service) ON DELETE CASCADE
);
CREATE TABLE import_applied (
  user_id    INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
  source     TEXT    NOT NULL,
  item       TEXT    NOT NULL,
  play_count INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, source, item)
) WITHOUT ROWID;
CREATE TABLE sonic (
  audio    TEXT    NOT NULL UNIQUE,
  version  INTEGER NOT NULL,
  status   TEXT    NOT NULL,
  reason   TEXT,
  seconds  REAL,
  features BLOB,
  analyzed REAL    NOT NULL
);
INSERT INTO sonic VALUES('v1:25c2349bf75beebd4bb6d24a77f1aab3b1d24366cc3da19bd61af74c6ddaedd5',1,'ok',NULL,12.0,X'0000803f0000a03f0000c03f0000e03f0000004000001040000020400000304000004040000050400000604000007040000080400000884000009040000098400000a0400000a8400000b0400000b8400000c0400000c8400000d0400000d8400000e0400000e8400000f0400000f84000000041000004410000084100000c4100001041000014410000184100001c4100002041000024410000284100002c4100003041000034410000384100003c4100004041000044410000484100004c4100005041000054410000584100005c4100006041000064410000684100006c4100007041',1796605433.732212305);
CREATE TABLE track_lyrics (
  track_id INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  lang     TEXT    NOT NULL,
  source   TEXT    NOT NULL,
  text     TEXT    NOT NULL,
  PRIMARY KEY (track_id, position)
) WITHOUT ROWID;
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('podcast_channel',0);
INSERT INTO sqlite_sequence VALUES('podcast_episode',0);
INSERT INTO sqlite_sequence VALUES('scrobble_outbox',0);
INSERT INTO sqlite_sequence VALUES('library',1);
INSERT INTO sqlite_sequence VALUES('track',8);
INSERT INTO sqlite_sequence VALUES('change_transaction',6);
INSERT INTO sqlite_sequence VALUES('change_log',19);
INSERT INTO sqlite_sequence VALUES('playlist',2);
INSERT INTO sqlite_sequence VALUES('user',2);
INSERT INTO sqlite_sequence VALUES('listen',2);
INSERT INTO sqlite_sequence VALUES('radio_station',1);
INSERT INTO sqlite_sequence VALUES('share',1);
CREATE INDEX track_artwork ON track(artwork_id) WHERE artwork_id IS NOT NULL;
CREATE INDEX track_audio_hash ON track(audio_hash) WHERE audio_hash IS NOT NULL;
CREATE INDEX playlist_parent ON playlist(parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX playlist_item_track ON playlist_item(track_id);
CREATE INDEX change_log_tx ON change_log(tx);
CREATE INDEX playlist_item_log_playlist ON playlist_item_log(playlist_id, tx);
CREATE UNIQUE INDEX user_owner ON user(is_owner) WHERE is_owner = 1;
CREATE INDEX api_key_user ON api_key(user_id);
CREATE INDEX user_session_user ON user_session(user_id);
CREATE INDEX user_session_expires ON user_session(expires);
CREATE INDEX user_track_starred ON user_track(user_id, starred) WHERE starred IS NOT NULL;
CREATE INDEX user_track_track ON user_track(track_id);
CREATE INDEX playlist_owner_user ON playlist_owner(user_id);
CREATE INDEX play_queue_item_track ON play_queue_item(track_id);
CREATE INDEX playlist_file_playlist ON playlist_file(playlist_id);
CREATE INDEX artist_picture_artist ON artist_picture(artist_id);
CREATE INDEX artist_picture_artwork ON artist_picture(artwork_id);
CREATE INDEX bookmark_track ON bookmark(track_id);
CREATE INDEX share_user ON share(user_id);
CREATE INDEX share_item_track ON share_item(track_id);
CREATE INDEX podcast_episode_published ON podcast_episode(published DESC, id DESC);
CREATE INDEX track_missing ON track(missing_since) WHERE missing_since IS NOT NULL;
CREATE INDEX music_root_library ON music_root(library_id);
CREATE INDEX listen_user_time ON listen(user_id, played_at, id);
CREATE INDEX listen_track ON listen(track_id);
CREATE INDEX scrobble_outbox_queue ON scrobble_outbox(user_id, service, played_at, id);
CREATE INDEX scrobble_outbox_listen ON scrobble_outbox(listen_id);
COMMIT;
PRAGMA user_version = 18;
