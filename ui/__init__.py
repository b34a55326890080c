"""The workbench UI layer: session state, the sidebar and widgets shared by the pages in app_pages/."""
