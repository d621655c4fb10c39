{
  "targets": [
    {
      "target_name": "pagecache",
      "sources": ["pagecache.c"],
      "cflags": ["-O2", "-std=gnu11"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O2", "-std=gnu11"] }
    }
  ]
}
