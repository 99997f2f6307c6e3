/* A statically linked program: no dynamic section, so no library can be added to it. */
int main(void)
{
  return 0;
}
