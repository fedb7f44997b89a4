// Compiles the tests precompiled header (support/test_pch.hpp) once for every test.
