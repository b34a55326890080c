"""The workbench UI layer: session state, the sidebar and widgets shared by the pages in rageval_ui/app_pages/."""
