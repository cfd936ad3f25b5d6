/* r_plug: libplug.so for r_dlopen. */
int plug_value(void) { return 42; }
